//! Read and write buffers kept per thread between messages, so that an idle connection holds
//! none and a busy one does not get new ones for every message.
//!
//! A connection whose read buffer is empty after a read (every message in it was whole) gives
//! the buffer back here, and its next read takes one from here; the outbox takes a write
//! buffer for a batch and gives it back once the socket took the batch whole. One buffer of
//! each kind is kept per thread: a thread serves one connection at a time, and a kept read
//! buffer is the size of one read, a block the allocator would otherwise hand out and take
//! back for every call (a block that size takes its slow path, which first merges every small
//! block freed since). The outbox's scratch text (a frame's TOON before its header can be
//! written) is kept the same way: made afresh for every batch, it was an allocation and a
//! free for every reply over frames.

use std::cell::Cell;

use bytes::BytesMut;

/// A buffer that grew past this for a large message is freed rather than kept.
const KEPT_CAPACITY: usize = 64 * 1024;

/// What a buffer is for; a thread keeps one of each.
#[derive(Clone, Copy, Debug)]
pub(super) enum Use {
    /// The bytes read from a socket, cut into payloads.
    Read,
    /// A batch of encoded messages for a socket.
    Write,
}

thread_local! {
    static SPARE: [Cell<BytesMut>; 2] = [Cell::new(BytesMut::new()), Cell::new(BytesMut::new())];
    static SPARE_TEXT: Cell<String> = const { Cell::new(String::new()) };
}

/// A buffer for `what`: this thread's spare one, or a new empty one.
pub(super) fn take(what: Use) -> BytesMut {
    SPARE
        .try_with(|spare| spare[what as usize].take())
        .unwrap_or_default()
}

/// Keeps `buffer` (emptied) for the next `take(what)` on this thread.
///
/// Its storage may still be shared with a payload cut from it; once that payload is gone the
/// next `reserve` reuses the storage, and until then it allocates as a new buffer would.
pub(super) fn give_back(what: Use, mut buffer: BytesMut) {
    buffer.clear();
    // A connection that had no buffer (its loop went round for a write or a timer) has none
    // to give, and must not push out the one kept here.
    if buffer.capacity() == 0 || buffer.capacity() > KEPT_CAPACITY {
        return;
    }
    let _ = SPARE.try_with(|spare| spare[what as usize].set(buffer));
}

/// Runs `work` on this thread's spare text, emptied, and keeps the text for the next call
/// unless it grew past what is kept. A call made while another one's `work` runs (none does
/// today) gets a new text of its own.
pub(super) fn with_text<R>(work: impl FnOnce(&mut String) -> R) -> R {
    let mut text = SPARE_TEXT.try_with(Cell::take).unwrap_or_default();
    text.clear();
    let result = work(&mut text);
    if text.capacity() <= KEPT_CAPACITY {
        let _ = SPARE_TEXT.try_with(|spare| spare.set(text));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_the_next_one_taken_and_its_storage_is_reused() {
        let mut buffer = take(Use::Read);
        buffer.reserve(8 * 1024);
        buffer.extend_from_slice(b"{\"id\":1}\n");
        let storage = buffer.as_ptr();
        let payload = buffer.split_to(9).freeze();
        drop(payload);
        give_back(Use::Read, buffer);
        let mut again = take(Use::Read);
        assert!(again.is_empty());
        again.reserve(8 * 1024);
        assert_eq!(
            again.as_ptr(),
            storage,
            "the read buffer's storage is reused"
        );
        assert!(take(Use::Read).capacity() == 0, "only one buffer is kept");
        // Giving back no buffer at all keeps the one kept.
        let mut kept = BytesMut::with_capacity(64);
        kept.extend_from_slice(b"x");
        give_back(Use::Read, kept);
        give_back(Use::Read, BytesMut::new());
        assert_eq!(take(Use::Read).capacity(), 64);
        // The write buffer is kept apart from the read buffer.
        let mut batch = BytesMut::with_capacity(128);
        batch.extend_from_slice(b"reply");
        give_back(Use::Write, batch);
        assert_eq!(take(Use::Read).capacity(), 0);
        assert_eq!(take(Use::Write).capacity(), 128);
        // A buffer grown for a large message is not kept.
        let mut large = BytesMut::with_capacity(KEPT_CAPACITY + 1);
        large.extend_from_slice(b"x");
        give_back(Use::Read, large);
        assert_eq!(take(Use::Read).capacity(), 0);
    }

    #[test]
    fn the_spare_text_is_kept_emptied_and_one_grown_past_the_limit_is_let_go() {
        let storage = with_text(|text| {
            text.push_str("jsonrpc: \"2.0\"");
            text.as_ptr()
        });
        let again = with_text(|text| {
            assert!(text.is_empty(), "the text is handed out empty");
            assert!(text.capacity() > 0, "the text kept its storage");
            text.as_ptr()
        });
        assert_eq!(again, storage, "the same storage is handed out again");
        // A call inside another one's work gets a text of its own.
        with_text(|outer| {
            outer.push('a');
            with_text(|inner| {
                assert!(inner.is_empty());
                assert_ne!(inner.as_ptr(), outer.as_ptr());
            });
        });
        with_text(|text| text.reserve(KEPT_CAPACITY + 1));
        assert_eq!(
            with_text(|text| text.capacity()),
            0,
            "a grown text is not kept"
        );
    }
}
