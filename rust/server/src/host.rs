//! What the servers ask of the application that hosts them (the IDE plugin, the headless
//! host, the test server). Every method has a safe default, so a host implements only what
//! it has a UI or a policy for.

use std::future::Future;
use std::pin::Pin;

use crate::guard::GuardRequest;
use crate::peer_credentials::PeerCredentials;
use crate::registry::ToolCollision;

/// A boxed yes/no answer that may take a while (a person clicking a button).
pub type AnswerFuture = Pin<Box<dyn Future<Output = bool> + Send + 'static>>;

/// The host's side of the conversation.
pub trait Host: Send + Sync + 'static {
    /// Asks the person whether `request` may run. `None` means there is no UI to ask in
    /// (headless, split mode), which the checkpoint treats as a denial.
    fn confirm(&self, request: &GuardRequest, prompt: &str) -> Option<AnswerFuture> {
        let _ = (request, prompt);
        None
    }

    /// Decides whether a new connection may talk to the servers. Called once per
    /// connection, after the kernel's credentials showed the peer is our own user, before any
    /// byte is read. The default admits every such peer.
    fn admit(&self, peer: &PeerCredentials) -> AnswerFuture {
        let _ = peer;
        Box::pin(async { true })
    }

    /// Tools were withheld because their names collide.
    fn tools_withheld(&self, collisions: &[ToolCollision]) {
        for collision in collisions {
            tracing::warn!(
                server = %collision.server,
                name = %collision.normalized_name,
                tools = ?collision.tools,
                "tools withheld: their names normalise to the same name"
            );
        }
    }
}

/// A host with every default: no UI, every same-user peer admitted.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeadlessHost;

impl Host for HeadlessHost {}
