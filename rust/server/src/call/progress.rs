//! Progress of a running call: the handler's own reports, or a heartbeat every so often until
//! the handler reports, sent as `notifications/progress` to a client that gave a
//! `progressToken`.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use ide_mcp_protocol::jsonrpc::Notification;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use crate::handler::{ProgressReport, ProgressSink};
use crate::outgoing::Outgoing;

/// Reports the handler may queue before the oldest is dropped.
const PROGRESS_QUEUE: usize = 16;

/// Forwards one call's progress while its handler runs.
pub(crate) struct ProgressForwarder {
    /// `None` when the client gave no progress token: nothing is forwarded, and neither the
    /// channel nor the heartbeat timer exists (each would be an allocation per call).
    state: Option<Forwarding>,
}

struct Forwarding {
    token: Value,
    outgoing: mpsc::Sender<Outgoing>,
    reports: mpsc::Receiver<ProgressReport>,
    heartbeat: tokio::time::Interval,
    started: Instant,
    last_progress: Option<f64>,
    handler_reported: bool,
}

impl ProgressForwarder {
    /// The sink the handler reports to, and the forwarder that passes its reports on.
    pub(crate) fn new(
        token: Option<Value>,
        heartbeat_every: Duration,
        outgoing: &mpsc::Sender<Outgoing>,
    ) -> (ProgressSink, ProgressForwarder) {
        let Some(token) = token else {
            return (ProgressSink::disabled(), ProgressForwarder { state: None });
        };
        let (sender, reports) = mpsc::channel(PROGRESS_QUEUE);
        let mut heartbeat = tokio::time::interval(heartbeat_every);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        heartbeat.reset();
        let forwarding = Forwarding {
            token,
            outgoing: outgoing.clone(),
            reports,
            heartbeat,
            started: Instant::now(),
            last_progress: None,
            handler_reported: false,
        };
        (
            ProgressSink::new(sender),
            ProgressForwarder {
                state: Some(forwarding),
            },
        )
    }

    /// Forwards reports and heartbeats; never returns, so it is raced against the handler.
    pub(crate) async fn forward(&mut self, tool_name: &str) -> Infallible {
        let Some(state) = &mut self.state else {
            return std::future::pending().await;
        };
        loop {
            tokio::select! {
                Some(report) = state.reports.recv() => {
                    state.handler_reported = true;
                    if state.last_progress.is_none_or(|last| report.progress > last) {
                        state.last_progress = Some(report.progress);
                        state.send(report);
                    }
                }
                _ = state.heartbeat.tick(), if !state.handler_reported => {
                    // Heartbeats count up by one, so progress always grows, until the handler
                    // reports on its own scale.
                    let beat = state.last_progress.map_or(1.0, |last| last.floor() + 1.0);
                    state.last_progress = Some(beat);
                    let message = format!(
                        "`{tool_name}` still running ({} ms)",
                        state.started.elapsed().as_millis()
                    );
                    state.send(ProgressReport {
                        progress: beat,
                        total: None,
                        message: Some(message),
                    });
                }
                else => std::future::pending::<()>().await,
            }
        }
    }
}

impl Forwarding {
    fn send(&self, report: ProgressReport) {
        let mut params = Map::new();
        params.insert("progressToken".to_owned(), self.token.clone());
        params.insert("progress".to_owned(), json!(report.progress));
        if let Some(total) = report.total {
            params.insert("total".to_owned(), json!(total));
        }
        if let Some(message) = report.message {
            params.insert("message".to_owned(), Value::from(message));
        }
        let notification = Notification {
            method: "notifications/progress".to_owned(),
            params: Some(Value::Object(params)),
        };
        // Progress is advisory and superseded by the next report: drop it when the client
        // is not reading rather than hold the call up.
        let _ = self.outgoing.try_send(notification.into_value().into());
    }
}
