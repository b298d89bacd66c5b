//! Admission of clients: the ones the host launched (and their descendants) and the ones an
//! admission credit covers go straight in; any other client is announced to the host, and
//! waits for its answer.
//!
//! A process is known by its identity — its pid and its start time — so a later process that
//! gets a trusted pid is not trusted, and a trusted process is forgotten once it exits.
//!
//! One prompt per process: connections from a process whose prompt is pending wait on that
//! same prompt, while another process (even one with the same command line) gets its own, so
//! a "yes" admits only the process the person was shown. A client the host rejected is
//! refused without a new prompt for a cooldown, so a peer that reconnects in a loop cannot
//! flood the person with questions.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::host::Host;
use crate::process_info::{descends_from, start_time, ClientProcess, ProcessIdentity};

/// A prompt registered by [`AdmissionGate::classify`], to be started with
/// [`AdmissionGate::ask`].
pub(crate) struct PendingPrompt {
    client: ClientProcess,
    answer: watch::Sender<Option<bool>>,
}

/// What the gate knows, behind one lock (never held across an await or a host call).
#[derive(Debug, Default)]
struct GateState {
    /// Processes the host launched; their descendants count too.
    launched: Vec<ProcessIdentity>,
    /// Processes admitted by a credit or by the host's Allow.
    allowed: Vec<ProcessIdentity>,
    /// Unused admission credits, as expiry instants.
    credits: Vec<Instant>,
    /// Prompts waiting for the host's answer.
    pending: Vec<(ClientProcess, watch::Receiver<Option<bool>>)>,
    /// Clients the host rejected (or did not answer for), and when.
    rejected: Vec<(ClientProcess, Instant)>,
}

/// Decides which connections may talk to the servers.
#[derive(Debug, Default)]
pub(crate) struct AdmissionGate {
    state: Mutex<GateState>,
}

/// The gate's first look at a connection.
pub(crate) enum Admission {
    /// Admitted without asking.
    Admitted,
    /// Refused without asking: rejected recently.
    Refused,
    /// Wait for the host's answer to this prompt (`None` until it answers).
    Wait(watch::Receiver<Option<bool>>),
    /// A new prompt is needed, and it is already registered (so connections classified after
    /// this one wait on it); whoever gets this starts it with [`AdmissionGate::ask`].
    Ask(PendingPrompt),
}

impl AdmissionGate {
    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The host launched `pid`: it and its descendants are expected, for as long as that very
    /// process runs. A pid with no running process is trusted for nothing.
    pub(crate) fn declare_launched(&self, pid: i32) {
        match ProcessIdentity::of(pid) {
            Some(identity) => self.lock().launched.push(identity),
            None => tracing::warn!(pid, "a declared client is not running; nothing is trusted"),
        }
    }

    /// The host no longer vouches for `pid`.
    pub(crate) fn forget_launched(&self, pid: i32) {
        let mut state = self.lock();
        state.launched.retain(|identity| identity.pid != pid);
        state.allowed.retain(|identity| identity.pid != pid);
    }

    /// One admission credit: the next unexpected connection within `valid_for` is admitted
    /// without a prompt (the host grants one when it launches a client whose pid it cannot
    /// know, such as one started through a shell).
    pub(crate) fn grant_credit(&self, valid_for: Duration) {
        self.lock().credits.push(Instant::now() + valid_for);
    }

    /// Classifies a new connection from `pid`.
    pub(crate) fn classify(&self, pid: i32, rejection_cooldown: Duration) -> Admission {
        let now = Instant::now();
        // Walking the process tree reads /proc; do it on a copy, without the lock. Processes
        // that exited are forgotten on the way.
        let trusted: Vec<ProcessIdentity> = {
            let mut state = self.lock();
            state.launched.retain(ProcessIdentity::is_running);
            state.allowed.retain(ProcessIdentity::is_running);
            state
                .launched
                .iter()
                .chain(&state.allowed)
                .copied()
                .collect()
        };
        if descends_from(pid, &|candidate| {
            trusted.iter().any(|identity| {
                identity.pid == candidate && start_time(candidate) == Some(identity.start_time)
            })
        }) {
            return Admission::Admitted;
        }
        let client = ClientProcess::inspect(pid);
        let mut state = self.lock();
        state.credits.retain(|expiry| *expiry > now);
        if !state.credits.is_empty() {
            state.credits.remove(0);
            if let Some(identity) = client.identity() {
                state.allowed.push(identity);
            }
            return Admission::Admitted;
        }
        state
            .rejected
            .retain(|(_, at)| now.duration_since(*at) < rejection_cooldown);
        if state
            .rejected
            .iter()
            .any(|(rejected, _)| rejected.same_client_as(&client))
        {
            return Admission::Refused;
        }
        // Only the very process a prompt shows waits on it: another process is shown on its
        // own, so nobody is admitted by an answer about someone else.
        if let Some((_, answer)) = state
            .pending
            .iter()
            .find(|(pending, _)| pending.same_process_as(&client))
        {
            return Admission::Wait(answer.clone());
        }
        // Registered under the same lock as the look-up above, so two connections of one
        // client arriving together cannot both start a prompt.
        let (answer, receiver) = watch::channel(None);
        state.pending.push((client.clone(), receiver));
        Admission::Ask(PendingPrompt { client, answer })
    }

    /// The prompt registered by `classify`: returns where its answer will appear, and the
    /// future that asks the host and records the answer. The caller spawns that future; it
    /// settles even if the first connection goes away.
    pub(crate) fn ask(
        self: &Arc<Self>,
        host: Arc<dyn Host>,
        prompt: PendingPrompt,
        timeout: Duration,
    ) -> (
        watch::Receiver<Option<bool>>,
        impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        let PendingPrompt {
            client,
            answer: sender,
        } = prompt;
        let receiver = sender.subscribe();
        let gate = Arc::clone(self);
        let prompt = async move {
            let answer = tokio::time::timeout(timeout, host.unexpected_client(&client))
                .await
                .unwrap_or(false);
            {
                let mut state = gate.lock();
                state
                    .pending
                    .retain(|(pending, _)| !pending.same_process_as(&client));
                if answer {
                    if let Some(identity) = client.identity() {
                        state.allowed.push(identity);
                    }
                } else {
                    state.rejected.push((client.clone(), Instant::now()));
                }
            }
            let _ = sender.send(Some(answer));
        };
        (receiver, prompt)
    }
}

/// Waits for a prompt's answer; `false` if the prompt went away unanswered.
pub(crate) async fn answer_of(mut receiver: watch::Receiver<Option<bool>>) -> bool {
    loop {
        if let Some(answer) = *receiver.borrow_and_update() {
            return answer;
        }
        if receiver.changed().await.is_err() {
            return receiver.borrow().unwrap_or(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> i32 {
        std::process::id() as i32
    }

    #[test]
    fn a_declared_process_is_trusted_and_a_reused_pid_is_not() {
        let gate = AdmissionGate::default();
        gate.declare_launched(me());
        assert!(matches!(
            gate.classify(me(), Duration::ZERO),
            Admission::Admitted
        ));
        // The same pid with another start time: what a reused pid looks like.
        let gate = AdmissionGate::default();
        let identity = ProcessIdentity::of(me()).expect("our own stat is readable");
        gate.lock().launched.push(ProcessIdentity {
            start_time: identity.start_time + 1,
            ..identity
        });
        assert!(matches!(
            gate.classify(me(), Duration::ZERO),
            Admission::Ask(_)
        ));
        assert!(gate.lock().launched.is_empty(), "forgotten: not running");
    }

    // A child that stays a while is `sleep` on Unix; on Windows the seam's
    // `a_child_is_ours_until_it_exits` covers a child's start time until it exits.
    #[cfg(unix)]
    #[test]
    fn a_declared_process_is_forgotten_once_it_exits() {
        let gate = AdmissionGate::default();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        gate.declare_launched(child.id() as i32);
        assert_eq!(gate.lock().launched.len(), 1);
        let _ = child.kill();
        let _ = child.wait();
        let _ = gate.classify(me(), Duration::ZERO);
        assert!(gate.lock().launched.is_empty());
    }
}
