//! The call path of `run(tool, args)`: from an admitted call to its reply.
//!
//! - [`run`]: [`RunCall`], one call from lookup to reply: validation, the baseline policy,
//!   the checkpoint, the audit record, the handler under its deadline, the output budget.
//! - [`checkpoint`]: the guard's verdict, the policy's concerns, destructive tools asking.
//! - [`progress`]: `notifications/progress` while a call runs.
//! - [`future_box`]: the box a call's future is polled in, kept from one call to the next.

pub(crate) mod checkpoint;
mod future_box;
pub(crate) mod progress;
pub(crate) mod run;

use std::future::Future;
use std::task::Poll;
use std::time::{Duration, Instant};

pub(crate) use run::RunCall;

use crate::shared::Shared;

/// A call that runs longer than this on the connection's task before answering or waiting
/// makes the connection yield before its next message.
const INLINE_CALL_YIELD_AFTER: Duration = Duration::from_micros(500);

/// Starts an admitted call.
///
/// Most calls finish without waiting for anything (a Rust handler, a guard that answers at
/// once): the call is polled here first, on the connection's task, so such a call costs no
/// task of its own and no wake-up of another thread. Only a call that has to wait moves to a
/// task of its own, so the connection goes on reading (and can cancel it) meanwhile. Whatever
/// the call registered a wake-up with while polled here is registered again by the task's
/// first poll (every future re-registers on each poll), so nothing is lost.
pub(crate) fn start(shared: &Shared, call: RunCall) -> impl Future<Output = ()> + '_ {
    // Boxed before the future is made: the call moves into its box, and only the box (a
    // pointer) lives in the connection task's future.
    let mut call = future_box::boxed(|| call.run());
    async move {
        let started = Instant::now();
        let inline = std::future::poll_fn(|context| {
            Poll::Ready(future_box::poll(call.as_mut(), context).is_ready())
        })
        .await;
        if inline {
            future_box::keep(call);
        } else {
            // The task keeps the box when the call is over, for the next call on its thread.
            let mut call = Some(call);
            shared.tasks.spawn(std::future::poll_fn(move |context| {
                let Some(slot) = call.as_mut() else {
                    return Poll::Ready(());
                };
                let polled = future_box::poll(slot.as_mut(), context);
                if polled.is_ready() {
                    if let Some(done) = call.take() {
                        future_box::keep(done);
                    }
                }
                polled
            }));
        }
        if started.elapsed() > INLINE_CALL_YIELD_AFTER {
            // A handler that computed for long before answering: let other tasks (other
            // connections, call tasks on this thread) run before the next message, as they would
            // have while the call ran in a task of its own.
            tokio::task::yield_now().await;
        }
    }
}
