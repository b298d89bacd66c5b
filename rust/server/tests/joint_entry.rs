//! A guard that judges a call and starts its handler in one entry (as the JNI layer does for a
//! Java guard and a Java handler), over real sockets: the handler starts only when the
//! checkpoint lets the call run at once, with exactly the arguments the guard judged; a
//! denial, an ask, a policy concern and a guard that answers too late run nothing in that
//! entry; the audit log holds one right record per call.
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ide_mcp_server::{
    AnswerFuture, AuditVerdict, DomainSpec, GuardRequest, HandlerFuture, Host, JointCall,
    JointFuture, JointOutcome, SecurityGuard, ServerName, ToolAnnotations, ToolCall, ToolHandler,
    ToolSpec, Verdict, VerdictFuture, PATH_KEYWORD,
};
use serde_json::{json, Value};
use support::{Setup, TestServers};

/// A handler the guard below can start itself; it records the arguments of every run.
#[derive(Default)]
struct Recorder {
    runs: Mutex<Vec<Value>>,
}

impl Recorder {
    fn run(&self, arguments: Value) -> Value {
        self.runs.lock().unwrap().push(arguments.clone());
        json!({ "ran": arguments })
    }
}

/// The `ToolHandler` face of a [`Recorder`], for the separate (second) entry.
struct RecordingTool(Arc<Recorder>);

impl ToolHandler for RecordingTool {
    fn call(&self, call: ToolCall) -> HandlerFuture {
        let value = self.0.run(call.arguments);
        Box::pin(async move { Ok(value) })
    }

    fn joint_entry(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        Some(self)
    }
}

/// Judges on a thread of its own, like a callback thread, and starts the handler there when
/// the gate opens. `delay` holds the verdict back; `run_for` is how long the handler then
/// takes.
struct OneEntryGuard {
    verdict: Verdict,
    delay: Duration,
    run_for: Duration,
    joint_entries: AtomicUsize,
    separate_judgements: AtomicUsize,
    judged: Mutex<Vec<Value>>,
    admitted: Arc<Mutex<Vec<bool>>>,
}

impl OneEntryGuard {
    fn new(verdict: Verdict, delay: Duration, run_for: Duration) -> Arc<Self> {
        Arc::new(OneEntryGuard {
            verdict,
            delay,
            run_for,
            joint_entries: AtomicUsize::new(0),
            separate_judgements: AtomicUsize::new(0),
            judged: Mutex::default(),
            admitted: Arc::default(),
        })
    }
}

impl SecurityGuard for OneEntryGuard {
    fn judge(&self, request: &GuardRequest) -> VerdictFuture {
        self.separate_judgements.fetch_add(1, Ordering::SeqCst);
        self.judged
            .lock()
            .unwrap()
            .push((*request.arguments).clone());
        let verdict = self.verdict.clone();
        Box::pin(async move { Ok(verdict) })
    }

    fn judge_and_start(&self, handler: &dyn ToolHandler, call: JointCall) -> Option<JointFuture> {
        let tool = handler
            .joint_entry()
            .and_then(|entry| entry.downcast_ref::<RecordingTool>())?;
        self.joint_entries.fetch_add(1, Ordering::SeqCst);
        self.judged
            .lock()
            .unwrap()
            .push((*call.request.arguments).clone());
        let recorder = Arc::clone(&tool.0);
        let verdict = self.verdict.clone();
        let delay = self.delay;
        let run_for = self.run_for;
        let admitted = Arc::clone(&self.admitted);
        let (answer, answered) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            std::thread::sleep(delay);
            let open = call.gate.admit(&verdict);
            admitted.lock().unwrap().push(open);
            let outcome = if open {
                std::thread::sleep(run_for);
                JointOutcome::Handled(Ok(recorder.run((*call.request.arguments).clone())))
            } else {
                JointOutcome::Judged(Ok(verdict))
            };
            let _ = answer.send(outcome);
        });
        Some(Box::pin(async move {
            answered
                .await
                .unwrap_or(JointOutcome::Judged(Err("no answer".to_owned())))
        }))
    }
}

/// A person who always says yes.
struct Yes {
    asked: AtomicUsize,
}

impl Host for Yes {
    fn confirm(&self, _request: &GuardRequest, _prompt: &str) -> Option<AnswerFuture> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Some(Box::pin(async { true }))
    }
}

fn domain(recorder: &Arc<Recorder>) -> DomainSpec {
    let schema = json!({
        "type": "object",
        "properties": { "path": { "type": "string", PATH_KEYWORD: true }, "note": { "type": "string" } },
    });
    let tool = |name: &str, destructive: bool| ToolSpec {
        name: name.to_owned(),
        description: format!("{name} something"),
        input_schema: schema.clone(),
        annotations: ToolAnnotations {
            read_only: !destructive,
            destructive,
        },
        deadline: None,
        handler: Arc::new(RecordingTool(Arc::clone(recorder))),
    };
    DomainSpec {
        name: "joint".to_owned(),
        description: "Judged and handled in one entry".to_owned(),
        server: ServerName::Code,
        tools: vec![tool("look", false), tool("erase", true)],
    }
}

struct Harness {
    servers: TestServers,
    guard: Arc<OneEntryGuard>,
    recorder: Arc<Recorder>,
    host: Arc<Yes>,
    _project: tempfile::TempDir,
}

fn start(verdict: Verdict, delay: Duration) -> Harness {
    start_with_timeout(
        verdict,
        delay,
        ide_mcp_server::ServerConfig::default().guard_timeout,
    )
}

fn start_with_timeout(verdict: Verdict, delay: Duration, guard_timeout: Duration) -> Harness {
    let deadline = ide_mcp_server::ServerConfig::default().default_deadline;
    start_with_clocks(verdict, delay, Duration::ZERO, guard_timeout, deadline)
}

/// A guard that answers after `delay`, a handler that takes `run_for`, and the server's
/// guard timeout and handler deadline.
fn start_with_clocks(
    verdict: Verdict,
    delay: Duration,
    run_for: Duration,
    guard_timeout: Duration,
    deadline: Duration,
) -> Harness {
    let project = tempfile::tempdir().unwrap();
    let guard = OneEntryGuard::new(verdict, delay, run_for);
    let recorder = Arc::new(Recorder::default());
    let host = Arc::new(Yes {
        asked: AtomicUsize::new(0),
    });
    let mut setup = Setup::default();
    setup.guard = guard.clone();
    setup.host = Some(host.clone());
    setup.config.guard_timeout = guard_timeout;
    setup.config.default_deadline = deadline;
    setup.config.project_roots = vec![std::fs::canonicalize(project.path()).unwrap()];
    setup.domains.push(domain(&recorder));
    Harness {
        servers: TestServers::start_with(setup),
        guard,
        recorder,
        host,
        _project: project,
    }
}

#[test]
fn an_allowed_call_is_judged_and_handled_in_one_entry_with_the_judged_arguments() {
    let harness = start(Verdict::Allow, Duration::ZERO);
    let mut client = harness.servers.client();
    let outcome = client.run("look", json!({ "note": "n\u{0}ü😀" })).unwrap();
    assert!(!outcome.is_error, "{}", outcome.text);
    assert_eq!(harness.guard.joint_entries.load(Ordering::SeqCst), 1);
    assert_eq!(harness.guard.separate_judgements.load(Ordering::SeqCst), 0);
    let judged = harness.guard.judged.lock().unwrap().clone();
    assert_eq!(*harness.recorder.runs.lock().unwrap(), judged);
    assert_eq!(judged, vec![json!({ "note": "n\u{0}ü😀" })]);
    let audit = harness.servers.servers().audit_log();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].verdict, AuditVerdict::Allowed);
    assert_eq!(audit[0].reason, "allowed by the Security Guard");
    assert_eq!(audit[0].arguments, vec![Arc::<str>::from("note")]);
    harness.servers.stop();
}

#[test]
fn a_denial_in_the_one_entry_runs_nothing() {
    let harness = start(
        Verdict::Deny {
            reason: "not in this project".to_owned(),
        },
        Duration::ZERO,
    );
    let mut client = harness.servers.client();
    let outcome = client.run("look", json!({ "note": "x" })).unwrap();
    assert!(outcome.is_error);
    assert!(
        outcome.text.contains("not in this project"),
        "{}",
        outcome.text
    );
    assert!(harness.recorder.runs.lock().unwrap().is_empty());
    assert_eq!(*harness.guard.admitted.lock().unwrap(), vec![false]);
    let audit = harness.servers.servers().audit_log();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].verdict, AuditVerdict::Denied);
    assert_eq!(audit[0].reason, "denied by the Security Guard");
    harness.servers.stop();
}

#[test]
fn a_policy_concern_keeps_the_gate_shut_unless_explicitly_allowed() {
    let harness = start(Verdict::Allow, Duration::ZERO);
    let mut client = harness.servers.client();
    let outcome = client
        .run("look", json!({ "path": "/etc/passwd" }))
        .unwrap();
    assert!(outcome.is_error);
    assert!(
        outcome.text.contains("outside the project"),
        "{}",
        outcome.text
    );
    assert!(harness.recorder.runs.lock().unwrap().is_empty());
    harness.servers.stop();

    let harness = start(Verdict::AllowExplicitly, Duration::ZERO);
    let mut client = harness.servers.client();
    let outcome = client
        .run("look", json!({ "path": "/etc/passwd" }))
        .unwrap();
    assert!(!outcome.is_error, "{}", outcome.text);
    assert_eq!(harness.recorder.runs.lock().unwrap().len(), 1);
    assert_eq!(harness.guard.separate_judgements.load(Ordering::SeqCst), 0);
    harness.servers.stop();
}

#[test]
fn a_destructive_tool_asks_the_host_and_then_runs_once() {
    let harness = start(Verdict::Allow, Duration::ZERO);
    let mut client = harness.servers.client();
    let outcome = client.run("erase", json!({ "note": "all" })).unwrap();
    assert!(!outcome.is_error, "{}", outcome.text);
    // The gate stayed shut for the ask; the person said yes; the handler ran once, with the
    // judged arguments, and the guard was not asked again.
    assert_eq!(*harness.guard.admitted.lock().unwrap(), vec![false]);
    assert_eq!(harness.host.asked.load(Ordering::SeqCst), 1);
    assert_eq!(
        *harness.recorder.runs.lock().unwrap(),
        vec![json!({ "note": "all" })]
    );
    assert_eq!(harness.guard.separate_judgements.load(Ordering::SeqCst), 0);
    let audit = harness.servers.servers().audit_log();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].reason, "confirmed by the user");
    harness.servers.stop();
}

#[test]
fn a_verdict_after_the_guard_timeout_starts_nothing() {
    let harness = start_with_timeout(
        Verdict::Allow,
        Duration::from_millis(1500),
        Duration::from_millis(300),
    );
    let mut client = harness.servers.client();
    let outcome = client.run("look", json!({ "note": "late" })).unwrap();
    assert!(outcome.is_error);
    assert!(outcome.text.contains("did not answer"), "{}", outcome.text);
    // Wait until the late verdict reached the gate, then check it stayed shut.
    while harness.guard.admitted.lock().unwrap().is_empty() {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(*harness.guard.admitted.lock().unwrap(), vec![false]);
    assert!(harness.recorder.runs.lock().unwrap().is_empty());
    let audit = harness.servers.servers().audit_log();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].verdict, AuditVerdict::Denied);
    harness.servers.stop();
}

// The client reads with a 20 s timeout: a server that waited for the guard timeout (60 s
// below) before it looked at the handler's deadline would fail these tests.
const LONG_GUARD_TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn a_handler_started_in_the_one_entry_is_stopped_at_its_deadline() {
    let harness = start_with_clocks(
        Verdict::Allow,
        Duration::ZERO,
        Duration::from_secs(30),
        LONG_GUARD_TIMEOUT,
        Duration::from_millis(300),
    );
    let mut client = harness.servers.client();
    let outcome = client.run("look", json!({ "note": "slow" })).unwrap();
    assert!(outcome.is_error);
    assert!(
        outcome
            .text
            .contains("did not finish within its deadline of 300 ms"),
        "{}",
        outcome.text
    );
    assert_eq!(*harness.guard.admitted.lock().unwrap(), vec![true]);
    harness.servers.stop();
}

#[test]
fn the_deadline_counts_from_the_opening_not_from_a_slow_guard() {
    // The guard takes longer than the handler's deadline; the handler then answers at once.
    let harness = start_with_clocks(
        Verdict::Allow,
        Duration::from_millis(600),
        Duration::ZERO,
        LONG_GUARD_TIMEOUT,
        Duration::from_millis(300),
    );
    let mut client = harness.servers.client();
    let outcome = client.run("look", json!({ "note": "late" })).unwrap();
    assert!(!outcome.is_error, "{}", outcome.text);
    assert_eq!(harness.recorder.runs.lock().unwrap().len(), 1);
    harness.servers.stop();

    // A slow guard and then a slow handler: stopped at the deadline after the opening, long
    // before the guard timeout.
    let harness = start_with_clocks(
        Verdict::Allow,
        Duration::from_millis(600),
        Duration::from_secs(30),
        LONG_GUARD_TIMEOUT,
        Duration::from_millis(300),
    );
    let mut client = harness.servers.client();
    let outcome = client.run("look", json!({ "note": "late, slow" })).unwrap();
    assert!(outcome.is_error);
    assert!(
        outcome.text.contains("did not finish within its deadline"),
        "{}",
        outcome.text
    );
    harness.servers.stop();
}
