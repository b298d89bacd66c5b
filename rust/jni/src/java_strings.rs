//! Strings across JNI without a heap allocation of ours for each.
//!
//! The JNI functions take and give modified UTF-8: the same bytes as UTF-8 for every character
//! from U+0001 to U+FFFF, different for NUL and for characters beyond U+FFFF. The `jni`
//! crate re-encodes every string into a fresh buffer on the way in, and on the way out asks
//! the JVM for a copy it allocates (`GetStringUTFChars`) and decodes that into a fresh
//! `String`. A call into a Java handler passes and takes a few short strings whose bytes
//! need no re-encoding, so here they go through one buffer per thread, reused: on the way in
//! copied with a terminating NUL and handed to `NewStringUTF` as they are; on the way out
//! written by `GetStringUTFRegion` into the buffer and read in place when they are UTF-8. A
//! string that is not (a NUL, a character beyond U+FFFF) or is longer than
//! [`MAX_BUFFERED`] takes the crate's way.

use std::cell::RefCell;
use std::ffi::CStr;

use jni::objects::JString;
use jni::strings::JNIStr;
use jni::Env;

use crate::error::BridgeError;

/// The longest string (in bytes) that goes through the buffer.
pub const MAX_BUFFERED: usize = 64 * 1024;

/// The most a thread keeps of its buffer between strings: a larger one is let go after the
/// string it was grown for. Any Java thread that answers a call (`completeCall`) has a buffer,
/// and an IDE has many threads.
const KEPT_BYTES: usize = 4 * 1024;

thread_local! {
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `work` on this thread's buffer, emptied, and lets a buffer grown past [`KEPT_BYTES`]
/// go afterwards.
fn with_buffer<R>(work: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    BUFFER.with(|buffer| {
        let mut buffer = buffer.borrow_mut();
        buffer.clear();
        let result = work(&mut buffer);
        if buffer.capacity() > KEPT_BYTES {
            *buffer = Vec::new();
        }
        result
    })
}

/// A new Java string holding `text`.
pub fn to_java<'local>(env: &mut Env<'local>, text: &str) -> Result<JString<'local>, BridgeError> {
    if text.len() >= MAX_BUFFERED || !is_modified_utf8_as_is(text.as_bytes()) {
        return Ok(JString::from_str(env, text)?);
    }
    with_buffer(|buffer| {
        buffer.extend_from_slice(text.as_bytes());
        buffer.push(0);
        let terminated = CStr::from_bytes_with_nul(buffer)
            .map_err(|error| BridgeError::Server(format!("a string for Java: {error}")))?;
        // SAFETY: the bytes are UTF-8 without NUL and without a character beyond U+FFFF
        // (checked above), which is exactly the modified UTF-8 of the same text.
        let modified = unsafe { JNIStr::from_cstr_unchecked(terminated) };
        Ok(JString::from_jni_str(env, modified)?)
    })
}

/// Runs `read` on the text of the Java string `string` (which must not be null). `read` runs
/// while this thread's buffer is lent to it, so it must not pass strings to or from Java.
pub fn read_from_java<R>(
    env: &Env<'_>,
    string: &JString<'_>,
    read: impl FnOnce(&str) -> R,
) -> Result<R, BridgeError> {
    if string.is_null() {
        return Err(BridgeError::IllegalArgument(
            "a string must not be null".to_owned(),
        ));
    }
    let raw = env.get_raw();
    // SAFETY: `raw` is this thread's live JNIEnv (`env` borrows it) and `string` a live,
    // non-null reference to a `java.lang.String`; neither function throws.
    let (characters, length) = unsafe {
        (
            ((**raw).v1_1.GetStringLength)(raw, string.as_raw()),
            ((**raw).v1_1.GetStringUTFLength)(raw, string.as_raw()),
        )
    };
    let Ok(length) = usize::try_from(length) else {
        return Ok(read(&string.try_to_string(env)?));
    };
    if length >= MAX_BUFFERED {
        return Ok(read(&string.try_to_string(env)?));
    }
    // The buffer's text is read in place; bytes that are not UTF-8 give `read` back, for the
    // crate's decoding.
    let in_place = with_buffer(|buffer| {
        // Room for the bytes and the NUL the JVM writes after them.
        buffer.resize(length + 1, 0);
        // SAFETY: as above; the region is the whole string (`characters` UTF-16 units, from 0),
        // so no exception, and its modified UTF-8 is `length` bytes plus a NUL, which the
        // buffer holds.
        unsafe {
            ((**raw).v1_2.GetStringUTFRegion)(
                raw,
                string.as_raw(),
                0,
                characters,
                buffer.as_mut_ptr().cast(),
            );
        }
        // Valid UTF-8 holds neither modified UTF-8's NUL (C0 80) nor its surrogates: when the
        // bytes are UTF-8, they are the text.
        match std::str::from_utf8(&buffer[..length]) {
            Ok(text) => Ok(read(text)),
            Err(_) => Err(read),
        }
    });
    match in_place {
        Ok(result) => Ok(result),
        Err(read) => Ok(read(&string.try_to_string(env)?)),
    }
}

/// Whether these UTF-8 bytes are their own modified UTF-8: no NUL and no character beyond
/// U+FFFF (whose lead byte is F0 or above).
fn is_modified_utf8_as_is(bytes: &[u8]) -> bool {
    !bytes.iter().any(|&byte| byte == 0 || byte >= 0xF0)
}
