//! What the servers ask of the application that hosts them (the IDE plugin, the headless
//! host, the test server). Every method has a safe default, so a host implements only what
//! it has a UI or a policy for.

use std::future::Future;
use std::pin::Pin;

use crate::guard::GuardRequest;
use crate::page_delivery::SplitModeNotice;
use crate::process_info::ClientProcess;
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

    /// A connection came from a process the host did not launch (nor a descendant of one,
    /// nor one covered by an admission credit). The host shows it to the person; when its
    /// setting asks for approval, it answers once the person chose Allow (`true`) or Reject
    /// (`false`). Nothing from the connection runs before the answer; no answer within the
    /// admission timeout, or the client going away, closes it. The default announces the
    /// client in the log and admits it.
    fn unexpected_client(&self, client: &ClientProcess) -> AnswerFuture {
        tracing::warn!(
            pid = client.pid,
            executable = ?client.executable,
            command_line = ?client.command_line,
            "an unexpected client connected to the IDE MCP servers"
        );
        Box::pin(async { true })
    }

    /// Split mode: the chat page could not be shown over any route, and the servers are up.
    /// The host shows `notice.message` with a way to copy `notice.configuration`.
    fn split_mode_notice(&self, notice: &SplitModeNotice) {
        tracing::warn!(
            configuration = %notice.configuration,
            "{}",
            notice.message
        );
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

/// A host with every default: no UI to confirm in, unexpected clients announced and admitted.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeadlessHost;

impl Host for HeadlessHost {}
