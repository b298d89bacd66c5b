//! The per-user registry of live server sets, end to end: `ide-mcp testserver --project`
//! registers, `ide-mcp list` reads, `ide-mcp bridge --project` finds the set serving a
//! directory (and finds it again after a restart), with stale and hostile entries in the
//! registry and registry directories that must be refused. Every process gets its own registry
//! through `IDE_MCP_REGISTRY`.

// Unix only: the hostile entries and refused directories are made with Unix modes, symlinks,
// FIFOs and chown; the Windows protection is the platform seam's own tests' concern.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use ide_mcp_protocol::contract::TOKEN_FILE_NAME;
use serde_json::{json, Value};
use support::{start_server, BINARY};

/// How long one step may take before the test fails instead of hanging.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);

/// A registry directory of the test's own, and the temporary directories it made.
struct Registry {
    dir: tempfile::TempDir,
}

impl Registry {
    fn new() -> Registry {
        Registry {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The registry itself: a directory the first set creates inside the temporary one.
    fn path(&self) -> PathBuf {
        self.dir.path().join("registry")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BINARY);
        command.args(args).env("IDE_MCP_REGISTRY", self.path());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).stdin(Stdio::null()).output().unwrap()
    }

    /// `ide-mcp list --json`, which must succeed.
    fn list(&self) -> Vec<Value> {
        let output = self.run(&["list", "--json"]);
        assert!(output.status.success(), "{output:?}");
        let records: Value = serde_json::from_slice(&output.stdout).unwrap();
        records.as_array().unwrap().clone()
    }

    /// Starts a test server registered under `projects`, with a runtime base of its own.
    fn start_set(&self, projects: &[&Path]) -> Set {
        let base = tempfile::tempdir_in("/tmp").unwrap();
        let mut command = self.command(&["testserver", "--base"]);
        command.arg(base.path());
        for project in projects {
            command.arg("--project").arg(project);
        }
        let (child, directory) = start_server(command);
        Set {
            child,
            directory,
            _base: base,
        }
    }
}

/// A running, registered test server; stopped by closing its stdin.
struct Set {
    child: Child,
    directory: PathBuf,
    _base: tempfile::TempDir,
}

impl Set {
    fn stop(mut self) {
        drop(self.child.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }

    fn socket(&self, server: &str) -> PathBuf {
        self.directory.join(format!("{server}.sock"))
    }
}

/// A bridge process, its stdout lines and its stderr lines as they come.
struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
}

impl Bridge {
    fn start(mut command: Command) -> Bridge {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Bridge {
            stdin: child.stdin.take(),
            stdout: lines_of(child.stdout.take().unwrap()),
            stderr: lines_of(child.stderr.take().unwrap()),
            child,
        }
    }

    /// Sends `run(tool, args)` without waiting for the reply.
    fn send_run(&mut self, id: u64, tool: &str, args: Value) {
        let request = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "run", "arguments": { "tool": tool, "args": args } },
        });
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends `echo {value}` and returns the reply.
    fn echo(&mut self, id: u64, value: &str) -> Value {
        self.send_run(id, "echo", json!({ "value": value }));
        self.reply(id)
    }

    /// The next reply with `id`.
    fn reply(&mut self, id: u64) -> Value {
        loop {
            let line = self.stdout.recv_timeout(STEP_TIMEOUT).unwrap();
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == json!(id) {
                return reply;
            }
        }
    }

    /// The next stderr line that contains `text`.
    fn stderr_line_with(&self, text: &str) -> String {
        loop {
            let line = self
                .stderr
                .recv_timeout(STEP_TIMEOUT)
                .unwrap_or_else(|_| panic!("no stderr line with {text:?}"));
            if line.contains(text) {
                return line;
            }
        }
    }

    fn finish(mut self) {
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }
}

fn lines_of(stream: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            if sender.send(line).is_err() {
                return;
            }
        }
    });
    receiver
}

fn echoed(reply: &Value, value: &str) -> bool {
    reply["result"]["isError"] == json!(false)
        && reply["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains(value))
}

fn project_bridge(registry: &Registry, directory: &Path, server: &str) -> Bridge {
    let mut command = registry.command(&["bridge", "--project"]);
    command.arg(directory).arg(server);
    Bridge::start(command)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

#[test]
fn two_projects_open_at_once_are_listed_and_each_bridges_to_its_own_set() {
    let registry = Registry::new();
    let projects = tempfile::tempdir().unwrap();
    let alpha = projects.path().join("alpha");
    let beta = projects.path().join("beta");
    std::fs::create_dir_all(alpha.join("src")).unwrap();
    std::fs::create_dir_all(&beta).unwrap();
    let alpha_set = registry.start_set(&[&alpha]);
    let beta_set = registry.start_set(&[&beta]);

    let records = registry.list();
    assert_eq!(records.len(), 2, "{records:?}");
    let roots: Vec<&Value> = records.iter().map(|r| &r["projectRoots"][0]).collect();
    assert!(roots.contains(&&json!(canonical(&alpha))), "{records:?}");
    assert!(roots.contains(&&json!(canonical(&beta))), "{records:?}");
    for record in &records {
        assert_eq!(record["servers"], json!(["code", "run", "vcs", "ops"]));
        assert_eq!(record["host"], "ide-mcp testserver");
        assert!(record["pid"].as_i64().unwrap() > 0);
        let token = std::fs::read_to_string(
            Path::new(record["socketDirectory"].as_str().unwrap()).join(TOKEN_FILE_NAME),
        )
        .unwrap();
        assert!(
            !record.to_string().contains(token.trim()),
            "the record holds the token"
        );
    }
    let table = registry.run(&["list"]);
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(
        table.contains(&alpha_set.directory.display().to_string()),
        "{table}"
    );
    assert!(
        table.contains(&beta_set.directory.display().to_string()),
        "{table}"
    );

    let mut bridge = project_bridge(&registry, &alpha.join("src"), "vcs");
    let served = bridge.stderr_line_with("is served by");
    assert!(
        served.ends_with(&alpha_set.socket("vcs").display().to_string()),
        "{served}"
    );
    assert!(echoed(&bridge.echo(1, "to alpha"), "to alpha"));
    bridge.finish();
    let mut bridge = project_bridge(&registry, &beta, "ops");
    let served = bridge.stderr_line_with("is served by");
    assert!(
        served.ends_with(&beta_set.socket("ops").display().to_string()),
        "{served}"
    );
    assert!(echoed(&bridge.echo(1, "to beta"), "to beta"));
    bridge.finish();

    alpha_set.stop();
    beta_set.stop();
    assert!(registry.list().is_empty(), "a stopped set left its record");
}

#[test]
fn nested_projects_go_to_the_deepest_root() {
    let registry = Registry::new();
    let outer = tempfile::tempdir().unwrap();
    let inner = outer.path().join("modules").join("inner");
    std::fs::create_dir_all(inner.join("src")).unwrap();
    let outer_set = registry.start_set(&[outer.path()]);
    let inner_set = registry.start_set(&[&inner]);

    let bridge = project_bridge(&registry, &inner.join("src"), "code");
    let served = bridge.stderr_line_with("is served by");
    assert!(
        served.ends_with(&inner_set.socket("code").display().to_string()),
        "{served}"
    );
    bridge.finish();
    let bridge = project_bridge(&registry, &outer.path().join("modules"), "code");
    let served = bridge.stderr_line_with("is served by");
    assert!(
        served.ends_with(&outer_set.socket("code").display().to_string()),
        "{served}"
    );
    bridge.finish();

    outer_set.stop();
    inner_set.stop();
}

#[test]
fn no_match_or_two_sets_for_one_root_fail_with_what_was_found_and_nothing_on_stdout() {
    let registry = Registry::new();
    let project = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let first = registry.start_set(&[project.path()]);

    let output = registry
        .command(&["bridge", "--project"])
        .arg(elsewhere.path())
        .arg("code")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no live IDE MCP server set serves"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&canonical(project.path()).display().to_string()),
        "{stderr}"
    );

    let second = registry.start_set(&[project.path()]);
    let output = registry
        .command(&["bridge", "--project"])
        .arg(project.path())
        .arg("code")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("2 live IDE MCP server sets serve"),
        "{stderr}"
    );
    for set in [&first, &second] {
        assert!(
            stderr.contains(&set.directory.display().to_string()),
            "{stderr}"
        );
    }
    first.stop();
    second.stop();
}

#[test]
fn a_restarted_host_is_found_again_by_a_running_bridge() {
    let registry = Registry::new();
    let project = tempfile::tempdir().unwrap();
    let first = registry.start_set(&[project.path()]);
    let mut bridge = project_bridge(&registry, project.path(), "code");
    bridge.stderr_line_with("is served by");
    assert!(echoed(&bridge.echo(1, "before"), "before"));

    // A call in flight when the set stops is answered with an error, not left hanging: the
    // stop cancels it, and either the set's own "cancelled" tool error reaches the bridge
    // before the socket closes, or the bridge answers for the set that went away.
    bridge.send_run(9, "sleep", json!({ "ms": 60_000 }));
    first.stop();
    let lost = bridge.reply(9);
    let bridge_error = lost["error"]["message"]
        .as_str()
        .is_some_and(|message| !message.is_empty());
    let cancelled_by_the_set = lost["result"]["isError"] == json!(true);
    assert!(bridge_error || cancelled_by_the_set, "{lost}");
    bridge.stderr_line_with("lost the connection");
    let second = registry.start_set(&[project.path()]);
    let reply = bridge.echo(2, "after the restart");
    assert!(echoed(&reply, "after the restart"), "{reply}");
    let reconnected = bridge.stderr_line_with("reconnected to");
    assert!(
        reconnected.ends_with(&second.socket("code").display().to_string()),
        "{reconnected}"
    );

    // A new bridge finds the new set from the start too.
    let fresh = project_bridge(&registry, project.path(), "code");
    let served = fresh.stderr_line_with("is served by");
    assert!(
        served.ends_with(&second.socket("code").display().to_string()),
        "{served}"
    );
    fresh.finish();
    bridge.finish();
    second.stop();
}

/// A record like the test server's, for a process of the test's choosing.
fn record_for(pid: u32, start_time: u64, root: &Path) -> Value {
    json!({
        "format": 1,
        "projectRoots": [root],
        "socketDirectory": "/tmp/claude-ide-mcp/gone",
        "servers": ["code"],
        "pid": pid,
        "pidStartTime": start_time,
        "host": "planted",
        "startedAt": 0,
    })
}

fn start_time_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 1..];
    after_name
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn stale_records_of_a_dead_process_or_a_reused_pid_are_ignored_and_removed() {
    let registry = Registry::new();
    let project = tempfile::tempdir().unwrap();
    let live = registry.start_set(&[project.path()]);
    let mut exited = Command::new("true").spawn().unwrap();
    let dead_pid = exited.id();
    exited.wait().unwrap();
    let me = std::process::id();
    let dead = registry.path().join("dead.json");
    let reused = registry.path().join("reused.json");
    for (path, record) in [
        (&dead, record_for(dead_pid, 1, project.path())),
        (
            &reused,
            record_for(me, start_time_of(me) + 1, project.path()),
        ),
    ] {
        std::fs::write(path, record.to_string()).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    let records = registry.list();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["host"], "ide-mcp testserver");
    assert!(!dead.exists(), "the dead process's record was not removed");
    assert!(!reused.exists(), "the reused pid's record was not removed");
    // Not ambiguous: the stale records do not count as sets serving the project.
    let bridge = project_bridge(&registry, project.path(), "code");
    bridge.stderr_line_with("is served by");
    bridge.finish();
    live.stop();
}

#[test]
fn hostile_entries_in_the_registry_cost_bounded_work_and_do_not_break_list() {
    let registry = Registry::new();
    let project = tempfile::tempdir().unwrap();
    let live = registry.start_set(&[project.path()]);
    let dir = registry.path();
    let huge = std::fs::File::create(dir.join("huge.json")).unwrap();
    huge.set_len(1 << 40).unwrap(); // a sparse terabyte: it must not be read
    std::fs::write(dir.join("malformed.json"), "{\"format\": 1, ").unwrap();
    std::fs::write(dir.join("deep.json"), "[".repeat(100_000)).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a record").unwrap();
    symlink("/etc/passwd", dir.join("link.json")).unwrap();
    std::fs::create_dir(dir.join("dir.json")).unwrap();
    let fifo = dir.join("fifo.json");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());

    let output = registry.run(&["list", "--json"]);
    assert!(output.status.success(), "{output:?}");
    let records: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(records.as_array().unwrap().len(), 1, "{records}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    for name in [
        "huge.json",
        "malformed.json",
        "deep.json",
        "link.json",
        "dir.json",
        "fifo.json",
    ] {
        assert!(
            stderr.contains(&format!("ignored {name}")),
            "{name} not reported: {stderr}"
        );
    }
    assert!(stderr.contains("over the limit"), "{stderr}");
    assert!(
        fifo.exists() && dir.join("huge.json").exists(),
        "ignored entries are left alone"
    );
    live.stop();
}

/// `IDE_MCP_REGISTRY=registry ide-mcp list` must fail saying `expected`, and a set must still
/// start, saying why it is not registered.
fn expect_refused(registry: &Path, expected: &str) {
    let command = |args: &[&str]| {
        let mut command = Command::new(BINARY);
        command.args(args).env("IDE_MCP_REGISTRY", registry);
        command
    };
    let output = command(&["list"]).stdin(Stdio::null()).output().unwrap();
    assert!(!output.status.success(), "{output:?}");
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("registry of live server sets is refused"),
        "{stderr}"
    );
    assert!(
        stderr.contains(expected),
        "{stderr} should say {expected:?}"
    );

    // A set still starts (clients can be given its sockets) and says why it is not listed.
    let base = tempfile::tempdir_in("/tmp").unwrap();
    let mut server = command(&["testserver", "--base"]);
    server.arg(base.path()).stderr(Stdio::piped());
    let (mut child, _directory) = start_server(server);
    drop(child.stdin.take());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("serving without a registry record"),
        "{stderr}"
    );
}

#[test]
fn a_registry_directory_open_to_others_unreadable_or_a_symlink_is_refused() {
    let parent = tempfile::tempdir().unwrap();
    let open = parent.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    expect_refused(&open, "its mode is 755");
    let unreadable = parent.path().join("unreadable");
    std::fs::create_dir(&unreadable).unwrap();
    std::fs::set_permissions(&unreadable, std::fs::Permissions::from_mode(0o000)).unwrap();
    expect_refused(&unreadable, "its mode is 0");
    let private = parent.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = parent.path().join("link");
    symlink(&private, &link).unwrap();
    expect_refused(&link, "symbolic link");
}

#[test]
fn a_registry_directory_of_another_user_is_refused() {
    let output = Command::new("id").arg("-u").output().unwrap();
    let us: u32 = String::from_utf8(output.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let parent = tempfile::tempdir().unwrap();
    let foreign = if us == 0 {
        let foreign = parent.path().join("foreign");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
        foreign
    } else {
        // Not root: root's /etc stands in for another user's directory.
        PathBuf::from("/etc")
    };
    expect_refused(&foreign, "owned by uid");
}

#[test]
fn a_forwarded_socket_is_bridged_with_its_token_file_named() {
    let registry = Registry::new();
    let set = registry.start_set(&[]);
    // A socket path whose directory has no token file, as a forwarded socket's has none.
    let elsewhere = tempfile::tempdir_in("/tmp").unwrap();
    let forwarded = elsewhere.path().join("code.sock");
    symlink(set.socket("code"), &forwarded).unwrap();

    let mut command = registry.command(&["bridge", "--token-file"]);
    command
        .arg(set.directory.join(TOKEN_FILE_NAME))
        .arg(&forwarded);
    let mut bridge = Bridge::start(command);
    assert!(echoed(&bridge.echo(1, "forwarded"), "forwarded"));
    bridge.finish();

    let mut command = registry.command(&["bridge"]);
    command.arg(&forwarded);
    let mut bridge = Bridge::start(command);
    let reply = bridge.echo(1, "no token");
    assert!(reply["error"].is_object(), "{reply}");
    bridge.stderr_line_with("token");
    bridge.finish();
    set.stop();
}
