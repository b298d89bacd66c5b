//! One server's accept loop: check the peer's credentials before a byte moves, then hand the
//! connection to its own task.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::connection;
use crate::platform::{is_same_user, peer_credentials, Listener};
use crate::server_name::ServerName;
use crate::shared::Shared;

/// How long to back off when `accept` fails (for example out of file descriptors), so a
/// failing accept does not become a busy loop.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Accepts connections on `listener` until `stop` fires.
pub(crate) async fn accept_loop(
    listener: Listener,
    server: ServerName,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    loop {
        // Every connection is accepted: the connection budget sheds an unauthenticated one when
        // there are too many, so a flood cannot keep a real client waiting in the backlog.
        let accepted = tokio::select! {
            biased;
            _ = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _address)) => stream,
            Err(error) => {
                tracing::warn!(server = %server, %error, "accept failed; backing off");
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                }
            }
        };
        let peer = match peer_credentials(&stream) {
            Ok(peer) if is_same_user(&peer) => peer,
            Ok(peer) => {
                tracing::warn!(server = %server, user = %peer.user, pid = peer.pid, "refused a peer of another user");
                drop(stream);
                continue;
            }
            Err(error) => {
                tracing::warn!(server = %server, %error, "refused a peer whose credentials could not be read");
                drop(stream);
                continue;
            }
        };
        // The place in the pool is taken here, in the order of the backlog: taken when the
        // connection's task first ran, a newcomer's task (which the runtime may run before
        // tasks spawned earlier) counted as older than connections accepted before it, and
        // was shed for them.
        let cancellation = shared.shutdown.child_token();
        let unauthenticated = shared
            .connection_budget(server)
            .enter(peer.pid, cancellation.clone());
        shared.tasks.spawn(connection::serve(
            stream,
            Arc::clone(&shared),
            server,
            peer,
            connection::Accepted {
                cancellation,
                unauthenticated,
            },
        ));
    }
}
