//! An accepted connection's halves on Linux, with a readiness registration of the
//! connection's own: the socket sits in an epoll set of its own, one-shot, armed only while
//! the connection waits for it, and the runtime's reactor watches that set.
//!
//! Why: the runtime's reactor watches every socket registered with it edge-triggered, for
//! good, and one of its workers parks in `epoll_wait` whenever another is busy. A client's
//! every message then wakes that parked worker, even when the busy worker takes the message
//! itself in its look at the socket (`connection/request_watch.rs`): the woken worker finds
//! nothing to do and parks again, and on a machine whose CPUs are taken it takes a CPU from
//! the call (docs/BENCHMARKS.md, "the parked worker that every message wakes"). A socket whose
//! interest is disarmed wakes nobody: its messages are seen by the connection's next read,
//! or, when the connection waits, at once when the wait arms the interest again (`EPOLL_CTL_MOD`
//! reports a socket that is ready already).
//!
//! What it costs: a wait arms the interest (one `epoll_ctl`), and a wake-up takes the set's
//! event (one `epoll_wait` that does not block, which is what disarms a one-shot interest).
//! A message the look takes costs neither. Each connection holds one more descriptor (its
//! set) for as long as it lives, so the connection caps bound those as they bound sockets.
//!
//! Its reads are `unix.rs`'s `recv_fd_into` (the look at the socket's too): into the buffer's
//! uninitialised room, retrying `EINTR`.

use std::future::Future;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream as StdStream;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::BufMut;
use rustix::event::epoll;
use rustix::event::Timespec;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncWrite, Interest};

/// The read side is waited for.
const READ: u8 = 1;
/// The write side is waited for.
const WRITE: u8 = 2;

/// One wait of `side` in [`Connection::waits`]: the read side's are counted in the low half,
/// the write side's in the high one.
fn one_wait(side: u8) -> u32 {
    if side == READ {
        1
    } else {
        1 << 16
    }
}

/// What both halves share: the socket, and its own epoll set as the reactor sees it.
#[derive(Debug)]
struct Connection {
    socket: StdStream,
    /// The set holding only `socket`, one-shot; readable when the armed interest fired.
    set: AsyncFd<OwnedFd>,
    /// How many waits each side has now ([`one_wait`]); every side with one is in the
    /// interest a wait arms. Counted rather than flagged, so that a wait dropped unfinished
    /// (a `select!` that took another branch) takes its side out of the interest only when
    /// no other wait of that side is left.
    waits: AtomicU32,
    /// Which sides found the socket unready at their last try (`READ`, `WRITE`): only those
    /// wait through the set; the others may go on at once, as the runtime's own readiness
    /// lets a side that has not seen `WouldBlock` since its last wake-up go on.
    blocked: AtomicU8,
}

impl Connection {
    /// Arms the interest of the sides waiting (with `side`: an arming replaces the interest,
    /// so it names every side that waits), and waits until it fires. It may end with the
    /// socket still unready for `side` (the event was the other side's): the caller tries,
    /// and waits again on `WouldBlock`.
    async fn ready(&self, side: u8) -> io::Result<()> {
        if self.blocked.load(Ordering::Acquire) & side == 0 {
            return Ok(());
        }
        let waiting = Waiting::on(self, side);
        self.arm(self.sides_waiting())?;
        let mut guard = self.set.readable().await?;
        self.take_event()?;
        guard.clear_ready();
        self.blocked.fetch_and(!side, Ordering::AcqRel);
        // The other side, if it waits too, was woken by the same event (the reactor wakes
        // every waiter of the set), and tries again.
        drop(waiting);
        Ok(())
    }

    /// The sides that have a wait now.
    fn sides_waiting(&self) -> u8 {
        let waits = self.waits.load(Ordering::Acquire);
        let mut sides = 0;
        if !waits.is_multiple_of(one_wait(WRITE)) {
            sides |= READ;
        }
        if waits >= one_wait(WRITE) {
            sides |= WRITE;
        }
        sides
    }

    /// The error of a try on `side`; a side that found the socket unready waits through the
    /// set next time.
    fn failed(&self, side: u8, errno: rustix::io::Errno) -> io::Error {
        if errno == rustix::io::Errno::AGAIN {
            self.blocked.fetch_or(side, Ordering::AcqRel);
        }
        errno.into()
    }

    /// Takes the set's event without waiting: that is what disarms a one-shot interest, so
    /// the socket wakes nobody until the next wait.
    fn take_event(&self) -> io::Result<()> {
        let mut events = [MaybeUninit::<epoll::Event>::uninit(); 1];
        epoll::wait(self.set.get_ref(), &mut events, Some(&Timespec::default()))?;
        Ok(())
    }

    fn arm(&self, sides: u8) -> io::Result<()> {
        let mut flags = epoll::EventFlags::ONESHOT;
        if sides & READ != 0 {
            flags |= epoll::EventFlags::IN | epoll::EventFlags::RDHUP;
        }
        if sides & WRITE != 0 {
            flags |= epoll::EventFlags::OUT;
        }
        epoll::modify(
            self.set.get_ref(),
            &self.socket,
            epoll::EventData::new_u64(0),
            flags,
        )?;
        Ok(())
    }
}

/// A side counted as waiting until its wait ends or is dropped (a `select!` that took another
/// branch): a side left counted would have its interest armed by the other side's waits,
/// and a socket ready for a side nobody reads would wake the connection again and again.
struct Waiting<'a> {
    connection: &'a Connection,
    side: u8,
}

impl<'a> Waiting<'a> {
    fn on(connection: &'a Connection, side: u8) -> Self {
        connection.waits.fetch_add(one_wait(side), Ordering::AcqRel);
        Waiting { connection, side }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.connection
            .waits
            .fetch_sub(one_wait(self.side), Ordering::AcqRel);
    }
}

/// The read half of an accepted connection.
#[derive(Debug)]
pub(crate) struct OwnReadHalf {
    connection: Arc<Connection>,
}

/// The write half of an accepted connection.
pub(crate) struct OwnWriteHalf {
    connection: Arc<Connection>,
    /// A write that found the socket full waits for room here (`poll_write`).
    room: Option<Pin<Box<dyn Future<Output = io::Result<()>> + Send>>>,
}

impl std::fmt::Debug for OwnWriteHalf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnWriteHalf")
            .field("connection", &self.connection)
            .field("waiting_for_room", &self.room.is_some())
            .finish()
    }
}

/// Splits an accepted stream into halves that wait through a registration of their own; the
/// stream leaves the reactor.
pub(crate) fn split(stream: tokio::net::UnixStream) -> io::Result<(OwnReadHalf, OwnWriteHalf)> {
    // Out of the reactor, still non-blocking (`into_std` leaves it so).
    let socket = stream.into_std()?;
    let set = epoll::create(epoll::CreateFlags::CLOEXEC)?;
    // Added with no interest: nothing fires until a wait arms it.
    epoll::add(
        &set,
        &socket,
        epoll::EventData::new_u64(0),
        epoll::EventFlags::ONESHOT,
    )?;
    // SAFETY: the `AsyncFd` owns the set's descriptor, which therefore stays open for as long
    // as it is registered.
    let set = unsafe { AsyncFd::register_with_interest(set, Interest::READABLE)? };
    let connection = Arc::new(Connection {
        socket,
        set,
        waits: AtomicU32::new(0),
        blocked: AtomicU8::new(READ | WRITE),
    });
    Ok((
        OwnReadHalf {
            connection: Arc::clone(&connection),
        },
        OwnWriteHalf {
            connection,
            room: None,
        },
    ))
}

impl OwnReadHalf {
    /// Waits until the socket may have something to read (or has hung up).
    pub(crate) fn readable(&self) -> impl Future<Output = io::Result<()>> + Send + '_ {
        self.connection.ready(READ)
    }

    /// Reads what is waiting into `buffer`'s spare room: `Ok(0)` at the peer's hang-up,
    /// `WouldBlock` when nothing waits.
    pub(crate) fn try_read_buf<B: BufMut>(&self, buffer: &mut B) -> io::Result<usize> {
        super::unix::recv_fd_into(self.connection.socket.as_fd(), buffer)
            .map_err(|errno| self.connection.failed(READ, errno))
    }
}

impl AsFd for OwnReadHalf {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.connection.socket.as_fd()
    }
}

impl OwnWriteHalf {
    /// Waits until the socket may take more bytes.
    pub(crate) fn writable(&self) -> impl Future<Output = io::Result<()>> + Send + '_ {
        // Borrows only what both halves share (which is `Sync`), not the half itself.
        self.connection.ready(WRITE)
    }

    /// Writes what the socket takes now of `bytes`; `WouldBlock` when it takes nothing.
    pub(crate) fn try_write(&self, bytes: &[u8]) -> io::Result<usize> {
        loop {
            match rustix::net::send(
                &self.connection.socket,
                bytes,
                rustix::net::SendFlags::DONTWAIT | rustix::net::SendFlags::NOSIGNAL,
            ) {
                Ok(written) => return Ok(written),
                Err(rustix::io::Errno::INTR) => continue,
                Err(errno) => return Err(self.connection.failed(WRITE, errno)),
            }
        }
    }
}

impl AsyncWrite for OwnWriteHalf {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            if let Some(room) = self.room.as_mut() {
                let waited = ready!(room.as_mut().poll(context));
                self.room = None;
                waited?;
            }
            match self.try_write(bytes) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    let connection = Arc::clone(&self.connection);
                    self.room = Some(Box::pin(async move { connection.ready(WRITE).await }));
                }
                written => return Poll::Ready(written),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.connection.socket.shutdown(std::net::Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::{Read, Write};
    use std::time::Duration;

    use rustix::event::{poll, PollFd, PollFlags};

    use super::*;
    use crate::platform::{bind_listener, connect_blocking, BlockingStream};

    /// A connection accepted and split on `runtime`, and the client's end.
    fn split_pair(
        runtime: &tokio::runtime::Runtime,
    ) -> (tempfile::TempDir, OwnReadHalf, OwnWriteHalf, BlockingStream) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let (read_half, write_half, client) = runtime.block_on(async {
            let listener = bind_listener(&path).unwrap();
            let client = connect_blocking(&path).unwrap();
            let (server_side, _) = listener.accept().await.unwrap();
            let (read_half, write_half) = split(server_side).unwrap();
            (read_half, write_half, client)
        });
        (dir, read_half, write_half, client)
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Whether the connection's set would wake the reactor now: it is readable when an armed
    /// interest fired.
    fn set_is_ready(half: &OwnReadHalf) -> bool {
        let mut fds = [PollFd::new(half.connection.set.get_ref(), PollFlags::IN)];
        poll(&mut fds, Some(&Timespec::default())).unwrap() > 0
    }

    /// Writes until the socket takes no more; how many bytes it took.
    fn fill(write_half: &OwnWriteHalf) -> usize {
        let chunk = [7u8; 64 * 1024];
        let mut written = 0;
        loop {
            match write_half.try_write(&chunk) {
                Ok(n) => written += n,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return written,
                Err(error) => panic!("write failed: {error}"),
            }
        }
    }

    /// The client's end reading `bytes` bytes on another thread, once told to.
    fn drain_when_told(
        mut client: BlockingStream,
        bytes: usize,
    ) -> (
        std::sync::mpsc::Sender<()>,
        std::thread::JoinHandle<BlockingStream>,
    ) {
        let (tell, told) = std::sync::mpsc::channel::<()>();
        let draining = std::thread::spawn(move || {
            told.recv().unwrap();
            let mut sink = vec![0u8; bytes];
            client.read_exact(&mut sink).unwrap();
            client
        });
        (tell, draining)
    }

    /// Within a few seconds, or the test fails instead of hanging.
    fn soon<F: Future>(runtime: &tokio::runtime::Runtime, future: F) -> F::Output {
        runtime
            .block_on(async { tokio::time::timeout(Duration::from_secs(5), future).await })
            .expect("the wait ended")
    }

    #[test]
    fn bytes_that_come_while_nobody_waits_wake_nobody_and_the_next_wait_sees_them() {
        let runtime = runtime();
        let (_dir, read_half, _write_half, mut client) = split_pair(&runtime);
        client.write_all(b"first").unwrap();
        assert!(
            !set_is_ready(&read_half),
            "nothing waits: the set stays quiet"
        );

        soon(&runtime, read_half.readable()).unwrap();
        let mut buffer = bytes::BytesMut::with_capacity(64);
        assert_eq!(read_half.try_read_buf(&mut buffer).unwrap(), 5);
        assert_eq!(&buffer[..], b"first");

        // Served and not waiting: more bytes fire nothing.
        client.write_all(b"second").unwrap();
        assert!(
            !set_is_ready(&read_half),
            "the wait's interest went with its event"
        );
        assert_eq!(read_half.try_read_buf(&mut buffer).unwrap(), 6);
        let error = read_half.try_read_buf(&mut buffer).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);

        // A wait that finds nothing arms the interest, and the next bytes end it.
        let waiting = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            client.write_all(b"third").unwrap();
            client
        });
        soon(&runtime, read_half.readable()).unwrap();
        let _client = waiting.join().unwrap();
        assert_eq!(read_half.try_read_buf(&mut buffer).unwrap(), 5);
        assert_eq!(&buffer[..], b"firstsecondthird");
    }

    #[test]
    fn a_wait_for_bytes_keeps_the_interest_of_a_write_waiting_for_room() {
        let runtime = runtime();
        let (_dir, read_half, write_half, client) = split_pair(&runtime);
        let written = fill(&write_half);
        let (both_waiting, client_side) = drain_when_told(client, written);
        soon(&runtime, async {
            // The write waits first, then the read: the read's arming must keep the write's
            // interest, or the room the client makes would wake nobody.
            let write = write_half.writable();
            let read = read_half.readable();
            tokio::pin!(write, read);
            assert!(futures::poll!(&mut write).is_pending());
            assert!(futures::poll!(&mut read).is_pending());
            both_waiting.send(()).unwrap();
            write.await.unwrap();
        });
        let _client = client_side.join().unwrap();
        assert!(write_half.try_write(b"more").unwrap() > 0);
    }

    #[test]
    fn a_side_whose_other_wait_was_dropped_still_waits() {
        let runtime = runtime();
        let (_dir, read_half, write_half, client) = split_pair(&runtime);
        let written = fill(&write_half);
        let (all_waiting, client_side) = drain_when_told(client, written);
        soon(&runtime, async {
            // Two waits for room; the first is given up, and then the read's arming must still
            // name the write side, which the second wait needs.
            let first = write_half.writable();
            let second = write_half.writable();
            tokio::pin!(second);
            {
                tokio::pin!(first);
                assert!(futures::poll!(&mut first).is_pending());
                assert!(futures::poll!(&mut second).is_pending());
            }
            let read = read_half.readable();
            tokio::pin!(read);
            assert!(futures::poll!(&mut read).is_pending());
            all_waiting.send(()).unwrap();
            second.await.unwrap();
        });
        let _client = client_side.join().unwrap();
    }

    #[test]
    fn a_wait_dropped_unfinished_no_longer_counts_as_waiting() {
        let runtime = runtime();
        let (_dir, read_half, _write_half, _client) = split_pair(&runtime);
        runtime.block_on(async {
            let wait = read_half.readable();
            let gave_up = tokio::time::timeout(Duration::from_millis(20), wait).await;
            assert!(gave_up.is_err(), "nothing came");
        });
        assert_eq!(read_half.connection.waits.load(Ordering::Acquire), 0);
    }

    #[test]
    fn a_hang_up_ends_a_wait_and_reads_as_the_end() {
        let runtime = runtime();
        let (_dir, read_half, _write_half, client) = split_pair(&runtime);
        let closing = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(client);
        });
        soon(&runtime, read_half.readable()).unwrap();
        closing.join().unwrap();
        let mut buffer = bytes::BytesMut::with_capacity(8);
        assert_eq!(read_half.try_read_buf(&mut buffer).unwrap(), 0);
    }
}
