//! Holding a connection from a client the host did not expect until the host answers. Nothing
//! it sends is decoded meanwhile; a bounded amount is read only to notice it leaving.

use std::sync::Arc;

use bytes::BytesMut;
use tokio_util::sync::CancellationToken;

use crate::admission::{answer_of, Admission};
use crate::platform::{recv_now, PeerCredentials, Stream};
use crate::shared::Shared;

use super::READ_CHUNK_BYTES;

/// How much an unexpected client may send while the host decides; past this it waits in
/// the kernel's socket buffer.
const PRE_ADMISSION_BYTES: usize = 64 * 1024;

/// Holds an unexpected client until the host answers, reading (a bounded amount of) what it
/// sends meanwhile so its leaving is noticed. Returns the bytes read, or `None` to close.
pub(super) async fn admit(
    stream: &Stream,
    shared: &Arc<Shared>,
    peer: &PeerCredentials,
    cancellation: &CancellationToken,
) -> Option<BytesMut> {
    let mut early = BytesMut::new();
    let receiver = match shared
        .admission
        .classify(peer.pid, shared.config.rejection_cooldown)
    {
        Admission::Admitted => return Some(early),
        Admission::Refused => return None,
        Admission::Wait(receiver) => receiver,
        Admission::Ask(pending) => {
            let (receiver, prompt) = shared.admission.ask(
                Arc::clone(&shared.host),
                pending,
                shared.config.admission_timeout,
            );
            let shutdown = shared.shutdown.clone();
            shared.tasks.spawn(async move {
                tokio::select! {
                    _ = prompt => {}
                    _ = shutdown.cancelled() => {}
                }
            });
            receiver
        }
    };
    let answer = answer_of(receiver);
    tokio::pin!(answer);
    loop {
        tokio::select! {
            biased;
            _ = cancellation.cancelled() => return None,
            allowed = &mut answer => {
                // A client that left while held is gone even if the answer came first:
                // nothing it sent may run.
                return (allowed && !hung_up(stream, &mut early)).then_some(early);
            }
            ready = stream.readable(), if early.len() < PRE_ADMISSION_BYTES => {
                ready.ok()?;
                early.reserve(READ_CHUNK_BYTES);
                match stream.try_read_buf(&mut early) {
                    // The client went away while held: nothing it sent will run.
                    Ok(0) => return None,
                    Ok(_) => {}
                    Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => return None,
                }
            }
        }
    }
}

/// Reads whatever is already waiting, without blocking, and says whether the peer has hung up.
/// It asks the socket itself rather than tokio, whose readiness may not have caught up with a
/// hang-up that happened a moment ago.
fn hung_up(stream: &Stream, early: &mut BytesMut) -> bool {
    let mut chunk = [0u8; 4096];
    while early.len() < PRE_ADMISSION_BYTES {
        match recv_now(stream, &mut chunk) {
            Ok(0) => return true,
            Ok(read) => early.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
    false
}
