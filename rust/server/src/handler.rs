//! The trait a tool's implementation fulfils, and what it receives for each call.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A boxed future a handler returns; handlers may finish on any thread and at any time.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'static>>;

/// A tool's implementation. The JNI layer implements it by forwarding to a Java handler;
/// Rust tools (the test server's, the benchmarks') implement it directly.
pub trait ToolHandler: Send + Sync + 'static {
    /// Starts one call. The returned future is polled on the server's runtime; it should
    /// finish soon after `call.cancellation` fires, but the server never waits for that:
    /// a cancelled or timed-out call is answered (or silenced) at once.
    fn call(&self, call: ToolCall) -> HandlerFuture;

    /// This handler as a guard that can start it in the same entry as its judgement sees it
    /// (see `SecurityGuard::judge_and_start`): `None` (the default) for a handler that runs
    /// where it is called.
    fn joint_entry(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        None
    }
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    fn call(&self, call: ToolCall) -> HandlerFuture {
        Box::pin(self(call))
    }
}

/// Everything a handler gets for one call.
#[derive(Debug)]
pub struct ToolCall {
    /// The arguments, already validated against the tool's schema; exactly what the guard saw.
    pub arguments: Value,
    /// Fires when the client cancels, the deadline passes, the connection closes or the
    /// servers stop.
    pub cancellation: CancellationToken,
    /// Where the handler reports progress; reports are dropped when nobody asked for them.
    pub progress: ProgressSink,
    /// The number the guard saw in [`GuardRequest::call_number`](crate::GuardRequest).
    pub call_number: u64,
    /// The Security Guard answered `AllowExplicitly`: the handler may show what the
    /// credential rule withholds (a file whose content holds a key, for example). With a
    /// plain `Allow` or a confirmation after `Ask`, it must not.
    pub explicitly_allowed: bool,
}

/// A handler's way to tell the client how far it got.
#[derive(Clone, Debug)]
pub struct ProgressSink {
    sender: Option<mpsc::Sender<ProgressReport>>,
}

/// One progress report, as `notifications/progress` carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressReport {
    /// How much is done; should grow with each report.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A short human-readable status.
    pub message: Option<String>,
}

impl ProgressSink {
    /// A sink that forwards reports to the connection.
    pub(crate) fn new(sender: mpsc::Sender<ProgressReport>) -> Self {
        ProgressSink {
            sender: Some(sender),
        }
    }

    /// A sink that drops everything: the request carried no progress token.
    pub fn disabled() -> Self {
        ProgressSink { sender: None }
    }

    /// Reports progress. Never blocks: when the client reads slowly, reports are dropped,
    /// because a later report supersedes an earlier one anyway.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sender) = &self.sender {
            let _ = sender.try_send(ProgressReport {
                progress,
                total,
                message,
            });
        }
    }

    /// Whether the client asked for progress (sent a progress token).
    pub fn is_enabled(&self) -> bool {
        self.sender.is_some()
    }
}

/// Why a handler failed. The message goes back to the model, so it should say what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// A failure with a message the model can act on.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}
