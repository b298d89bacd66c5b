//! The Security Guard checkpoint with the baseline policy, over real sockets: path
//! confinement, credential files, destructive tools asking, the host's confirmation UI, and
//! the audit log.
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ide_mcp_protocol::contract::TOKEN_FILE_NAME;
use ide_mcp_server::AnswerFuture;
use ide_mcp_server::ToolCall;
use ide_mcp_server::VerdictFuture;
use ide_mcp_server::PATH_KEYWORD;
use ide_mcp_server::{
    AuditVerdict, DomainSpec, GuardRequest, Host, SecurityGuard, ServerName, ToolAnnotations,
    ToolSpec, Verdict,
};
use serde_json::{json, Value};
use support::{Setup, TestServers};

/// A guard that answers one verdict and remembers what it saw.
struct Recording {
    verdict: Verdict,
    seen: Mutex<Vec<GuardRequest>>,
}

impl SecurityGuard for Recording {
    fn judge(&self, request: &GuardRequest) -> VerdictFuture {
        self.seen.lock().unwrap().push(request.clone());
        let verdict = self.verdict.clone();
        Box::pin(async move { Ok(verdict) })
    }
}

/// A host whose person always gives `answer`.
struct Person {
    answer: bool,
    asked: Mutex<Vec<String>>,
}

impl Host for Person {
    fn confirm(&self, _request: &GuardRequest, prompt: &str) -> Option<AnswerFuture> {
        self.asked.lock().unwrap().push(prompt.to_owned());
        let answer = self.answer;
        Some(Box::pin(async move { answer }))
    }
}

struct Project {
    _parent: tempfile::TempDir,
    root: PathBuf,
}

fn project() -> Project {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("proj");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(parent.path().join("proj-evil")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "// lib").unwrap();
    std::fs::write(root.join(".env"), "SECRET=1").unwrap();
    std::fs::write(parent.path().join("proj-evil/x.txt"), "x").unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    Project {
        _parent: parent,
        root,
    }
}

/// `files` on `code`: `read {path}` answers the path it was given; `delete {path}` is
/// destructive.
fn files_domain(received: Arc<Mutex<Vec<Value>>>) -> DomainSpec {
    let schema = json!({
        "type": "object",
        "properties": { "path": { "type": "string", PATH_KEYWORD: true }, "token": { "type": "string" } },
        "required": ["path"],
    });
    let tool = |name: &str, destructive: bool| {
        let received = Arc::clone(&received);
        ToolSpec {
            name: name.to_owned(),
            description: format!("{name} a file"),
            input_schema: schema.clone(),
            annotations: ToolAnnotations {
                read_only: !destructive,
                destructive,
            },
            deadline: None,
            handler: Arc::new(move |call: ToolCall| {
                let received = Arc::clone(&received);
                async move {
                    received.lock().unwrap().push(call.arguments.clone());
                    Ok(json!({
                        "path": call.arguments["path"],
                        "explicitlyAllowed": call.explicitly_allowed,
                    }))
                }
            }),
        }
    };
    DomainSpec {
        name: "files".to_owned(),
        description: "Files".to_owned(),
        server: ServerName::Code,
        tools: vec![tool("read", false), tool("delete", true)],
    }
}

struct Harness {
    servers: TestServers,
    guard: Arc<Recording>,
    received: Arc<Mutex<Vec<Value>>>,
    project: Project,
}

fn start_harness(verdict: Verdict, person: Option<Arc<Person>>) -> Harness {
    let project = project();
    let guard = Arc::new(Recording {
        verdict,
        seen: Mutex::default(),
    });
    let received = Arc::new(Mutex::new(Vec::new()));
    let mut setup = Setup::default();
    setup.guard = guard.clone();
    setup.config.project_roots = vec![project.root.clone()];
    setup.domains.push(files_domain(Arc::clone(&received)));
    if let Some(person) = person {
        setup.host = Some(person);
    }
    Harness {
        servers: TestServers::start_with(setup),
        guard,
        received,
        project,
    }
}

#[test]
fn a_path_inside_the_project_runs_and_the_handler_gets_exactly_what_the_guard_saw() {
    let harness = start_harness(Verdict::Allow, None);
    let mut client = harness.servers.client();
    let outcome = client
        .run("read", json!({ "path": "src/../src/lib.rs" }))
        .unwrap();
    assert!(!outcome.is_error, "{}", outcome.text);
    let expected = harness
        .project
        .root
        .join("src/lib.rs")
        .to_string_lossy()
        .into_owned();
    let seen = harness.guard.seen.lock().unwrap()[0].clone();
    assert_eq!(seen.arguments["path"], json!(expected));
    assert!(seen.concerns.is_empty());
    assert_eq!(harness.received.lock().unwrap()[0], *seen.arguments);
    harness.servers.stop();
}

#[test]
fn paths_outside_the_project_are_denied_unless_explicitly_allowed() {
    for path in [
        "../proj-evil/x.txt",
        "/etc/passwd",
        "src/../../proj-evil/x.txt",
    ] {
        let harness = start_harness(Verdict::Allow, None);
        let mut client = harness.servers.client();
        let outcome = client.run("read", json!({ "path": path })).unwrap();
        assert!(outcome.is_error, "{path}");
        assert!(
            outcome.text.contains("outside the project"),
            "{}",
            outcome.text
        );
        assert!(harness.received.lock().unwrap().is_empty());
        harness.servers.stop();
    }
    let harness = start_harness(Verdict::AllowExplicitly, None);
    let mut client = harness.servers.client();
    let outcome = client
        .run("read", json!({ "path": "../proj-evil/x.txt" }))
        .unwrap();
    assert!(!outcome.is_error, "{}", outcome.text);
    harness.servers.stop();
}

// Creating a symlink on Windows needs a privilege the test cannot count on.
#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_project_is_followed_and_denied() {
    let harness = start_harness(Verdict::Allow, None);
    let outside = harness.project.root.parent().unwrap().join("proj-evil");
    std::os::unix::fs::symlink(outside, harness.project.root.join("escape")).unwrap();
    let mut client = harness.servers.client();
    let outcome = client
        .run("read", json!({ "path": "escape/x.txt" }))
        .unwrap();
    assert!(outcome.is_error);
    assert!(outcome.text.contains("proj-evil"), "{}", outcome.text);
    harness.servers.stop();
}

#[test]
fn a_credential_file_is_denied_unless_explicitly_allowed() {
    let harness = start_harness(Verdict::Allow, None);
    let mut client = harness.servers.client();
    let outcome = client.run("read", json!({ "path": ".env" })).unwrap();
    assert!(outcome.is_error);
    assert!(outcome.text.contains("secrets"), "{}", outcome.text);
    harness.servers.stop();

    let harness = start_harness(Verdict::AllowExplicitly, None);
    let mut client = harness.servers.client();
    assert!(
        !client
            .run("read", json!({ "path": ".env" }))
            .unwrap()
            .is_error
    );
    harness.servers.stop();
}

#[test]
fn the_handler_learns_whether_the_guard_allowed_explicitly() {
    let person = Arc::new(Person {
        answer: true,
        asked: Mutex::default(),
    });
    for (verdict, person, expected) in [
        (Verdict::Allow, None, "explicitlyAllowed: false"),
        (Verdict::AllowExplicitly, None, "explicitlyAllowed: true"),
        (
            Verdict::Ask {
                prompt: "Read it?".to_owned(),
            },
            Some(person),
            "explicitlyAllowed: false",
        ),
    ] {
        let harness = start_harness(verdict, person);
        let mut client = harness.servers.client();
        let outcome = client.run("read", json!({ "path": "src/lib.rs" })).unwrap();
        assert!(!outcome.is_error, "{}", outcome.text);
        assert!(outcome.text.contains(expected), "{}", outcome.text);
        harness.servers.stop();
    }
}

#[test]
fn a_destructive_tool_always_asks_and_no_ui_means_no() {
    let harness = start_harness(Verdict::AllowExplicitly, None);
    let mut client = harness.servers.client();
    let outcome = client
        .run("delete", json!({ "path": "src/lib.rs" }))
        .unwrap();
    assert!(outcome.is_error);
    assert!(outcome.text.contains("no UI to ask in"), "{}", outcome.text);
    assert!(harness.received.lock().unwrap().is_empty());
    harness.servers.stop();
}

#[test]
fn the_person_confirms_or_declines() {
    let yes = Arc::new(Person {
        answer: true,
        asked: Mutex::default(),
    });
    let harness = start_harness(Verdict::Allow, Some(yes.clone()));
    let mut client = harness.servers.client();
    let outcome = client
        .run("delete", json!({ "path": "src/lib.rs" }))
        .unwrap();
    assert!(!outcome.is_error, "{}", outcome.text);
    assert!(yes.asked.lock().unwrap()[0].contains("delete"));
    harness.servers.stop();

    let no = Arc::new(Person {
        answer: false,
        asked: Mutex::default(),
    });
    let harness = start_harness(
        Verdict::Ask {
            prompt: "Read it?".to_owned(),
        },
        Some(no.clone()),
    );
    let mut client = harness.servers.client();
    let outcome = client.run("read", json!({ "path": "src/lib.rs" })).unwrap();
    assert!(outcome.is_error);
    assert!(outcome.text.contains("declined"), "{}", outcome.text);
    assert_eq!(no.asked.lock().unwrap()[0], "Read it?");
    harness.servers.stop();
}

#[test]
fn every_verdict_is_audited_without_argument_values() {
    let harness = start_harness(Verdict::Allow, None);
    let mut client = harness.servers.client();
    client
        .run("read", json!({ "path": "src/lib.rs", "token": "hunter2" }))
        .unwrap();
    client
        .run("read", json!({ "path": "/etc/passwd", "token": "hunter2" }))
        .unwrap();
    let log = harness.servers.servers().audit_log();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].verdict, AuditVerdict::Allowed);
    assert_eq!(&*log[0].tool, "read");
    assert_eq!(&*log[0].domain, "files");
    assert_eq!(log[0].client.pid, Some(std::process::id() as i32));
    assert_eq!(log[1].verdict, AuditVerdict::Denied);
    // The names of the declared arguments, the reason without the path it is about.
    assert!(log[1].arguments.contains(&Arc::from("path")), "{log:?}");
    assert!(
        log[1].reason.contains("`path` is outside the project"),
        "{}",
        log[1].reason
    );
    let printed = format!("{log:?}");
    assert!(!printed.contains("hunter2"));
    assert!(!printed.contains("/etc"), "{printed}");
    assert!(!printed.contains("passwd"), "{printed}");
    let token = std::fs::read_to_string(
        harness
            .servers
            .servers()
            .directory()
            .unwrap()
            .join(TOKEN_FILE_NAME),
    )
    .unwrap();
    assert!(!printed.contains(&token));
    harness.servers.stop();
}
