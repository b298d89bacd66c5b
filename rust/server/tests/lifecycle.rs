//! The runtime directory, sockets appearing and disappearing, the guard checkpoint, and
//! start/stop cycles that leave nothing behind.
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ide_mcp_protocol::contract::SPLIT_MODE_MESSAGE;
#[cfg(unix)]
use ide_mcp_protocol::contract::{SHARED_DIR_NAME, SOCKET_FILE_NAMES, TOKEN_FILE_NAME};
use ide_mcp_server::diagnostics::diagnostics_domain;
use ide_mcp_server::ToolCollision;
use ide_mcp_server::VerdictFuture;
use ide_mcp_server::{
    AllowAll, GuardRequest, Host, IdeMcpServers, SecurityGuard, ServerName, Verdict,
};
use serde_json::json;
use support::{Setup, TestServers};

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

// Unix modes; on Windows the owner-only ACL is checked by the platform seam's tests.
#[cfg(unix)]
#[test]
fn the_directory_sockets_and_token_have_the_contract_modes() {
    let servers = TestServers::start();
    let directory = servers.servers().directory().unwrap().to_path_buf();
    assert_eq!(
        directory.parent().unwrap().file_name().unwrap(),
        SHARED_DIR_NAME
    );
    assert_eq!(directory.file_name().unwrap().len(), 22);
    assert_eq!(mode(&directory), 0o700);
    assert_eq!(mode(directory.parent().unwrap()), 0o700);
    assert_eq!(mode(&directory.join(TOKEN_FILE_NAME)), 0o600);
    for name in SOCKET_FILE_NAMES {
        let metadata = std::fs::symlink_metadata(directory.join(name)).unwrap();
        assert!(metadata.file_type().is_socket());
        assert_eq!(metadata.permissions().mode() & 0o777, 0o600, "{name}");
    }
    servers.stop();
    assert!(!directory.exists());
}

#[test]
fn only_servers_with_a_domain_have_a_socket_and_registration_changes_that_live() {
    let mut setup = Setup::default();
    setup.domains = vec![diagnostics_domain(ServerName::Code)];
    let servers = TestServers::start_with(setup);
    let directory = servers.servers().directory().unwrap().to_path_buf();
    assert!(directory.join(ServerName::Code.socket_file_name()).exists());
    assert!(!directory.join(ServerName::Vcs.socket_file_name()).exists());
    assert_eq!(servers.servers().live_servers(), vec![ServerName::Code]);

    let mut vcs = diagnostics_domain(ServerName::Vcs);
    vcs.name = "git".to_owned();
    servers.servers().register_domain(vcs).unwrap();
    assert!(directory.join(ServerName::Vcs.socket_file_name()).exists());
    let mut client = servers.client_of(ServerName::Vcs, Default::default());
    assert!(client.domains().unwrap().text.contains("git"));
    drop(client);

    assert!(servers
        .servers()
        .remove_domain(ServerName::Vcs, "git")
        .unwrap());
    assert!(!directory.join(ServerName::Vcs.socket_file_name()).exists());
    assert!(!servers
        .servers()
        .remove_domain(ServerName::Vcs, "git")
        .unwrap());
    servers.stop();
}

#[test]
fn the_socket_path_falls_back_to_the_next_base_when_too_long() {
    let short = tempfile::tempdir().unwrap();
    let long = tempfile::tempdir().unwrap();
    let long_base = long.path().join("x".repeat(80));
    std::fs::create_dir(&long_base).unwrap();
    let servers = IdeMcpServers::builder([long_base, short.path().to_path_buf()])
        .guard(Arc::new(AllowAll))
        .domain(diagnostics_domain(ServerName::Code))
        .start()
        .unwrap();
    assert!(servers.directory().unwrap().starts_with(short.path()));
    assert!(
        servers
            .socket_path(ServerName::Code)
            .unwrap()
            .as_os_str()
            .len()
            <= 100
    );
    servers.stop().unwrap();
}

// Creating a symlink on Windows needs a privilege the test cannot count on.
#[cfg(unix)]
#[test]
fn a_symlink_where_the_directory_goes_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), base.path().join(SHARED_DIR_NAME)).unwrap();
    let result = IdeMcpServers::builder([base.path().to_path_buf()])
        .guard(Arc::new(AllowAll))
        .domain(diagnostics_domain(ServerName::Code))
        .start();
    let error = result.expect_err("a symlinked directory is refused");
    assert!(error.to_string().contains(SHARED_DIR_NAME), "{error}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn starting_without_a_guard_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let error = IdeMcpServers::builder([base.path().to_path_buf()])
        .domain(diagnostics_domain(ServerName::Code))
        .start()
        .expect_err("a guard is required");
    assert!(error.to_string().contains("Security Guard"));
}

struct Judge(Verdict);

impl SecurityGuard for Judge {
    fn judge(&self, request: &GuardRequest) -> VerdictFuture {
        assert_eq!(*request.arguments, json!({ "value": "secret-free" }));
        let verdict = self.0.clone();
        Box::pin(async move { Ok(verdict) })
    }
}

struct Failing;

impl SecurityGuard for Failing {
    fn judge(&self, _request: &GuardRequest) -> VerdictFuture {
        Box::pin(async { Err("policy file unreadable".to_owned()) })
    }
}

struct Silent;

impl SecurityGuard for Silent {
    fn judge(&self, _request: &GuardRequest) -> VerdictFuture {
        Box::pin(std::future::pending())
    }
}

fn run_echo_with(guard: Arc<dyn SecurityGuard>) -> (bool, String) {
    let mut setup = Setup::default();
    setup.guard = guard;
    setup.config.guard_timeout = Duration::from_millis(200);
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    let outcome = client
        .run("echo", json!({ "value": "secret-free" }))
        .unwrap();
    servers.stop();
    (outcome.is_error, outcome.text)
}

#[test]
fn the_guard_allows() {
    let (is_error, _) = run_echo_with(Arc::new(Judge(Verdict::Allow)));
    assert!(!is_error);
}

#[test]
fn the_guard_denies_with_its_reason() {
    let (is_error, text) = run_echo_with(Arc::new(Judge(Verdict::Deny {
        reason: "not on weekends".to_owned(),
    })));
    assert!(is_error);
    assert!(text.contains("not on weekends"), "{text}");
}

#[test]
fn an_ask_with_no_ui_is_a_denial() {
    let (is_error, text) = run_echo_with(Arc::new(Judge(Verdict::Ask {
        prompt: "Echo?".to_owned(),
    })));
    assert!(is_error);
    assert!(text.contains("no UI to ask in"), "{text}");
}

#[test]
fn a_failing_guard_is_a_denial() {
    let (is_error, text) = run_echo_with(Arc::new(Failing));
    assert!(is_error);
    assert!(text.contains("policy file unreadable"), "{text}");
}

#[test]
fn a_silent_guard_is_a_denial() {
    let (is_error, text) = run_echo_with(Arc::new(Silent));
    assert!(is_error);
    assert!(text.contains("did not answer"), "{text}");
}

#[derive(Default)]
struct RecordingHost {
    withheld: Mutex<Vec<ToolCollision>>,
}

impl Host for RecordingHost {
    fn tools_withheld(&self, collisions: &[ToolCollision]) {
        self.withheld.lock().unwrap().extend_from_slice(collisions);
    }
}

#[test]
fn colliding_tools_are_both_withheld_and_the_host_is_told() {
    let host = Arc::new(RecordingHost::default());
    let mut setup = Setup::default();
    setup.host = Some(host.clone());
    let mut twin = diagnostics_domain(ServerName::Code);
    twin.name = "twin".to_owned();
    twin.tools.retain(|tool| tool.name == "echo");
    twin.tools[0].name = "ECHO".to_owned();
    setup.domains.push(twin);
    let servers = TestServers::start_with(setup);
    let withheld = host.withheld.lock().unwrap().clone();
    assert_eq!(withheld.len(), 1);
    assert_eq!(withheld[0].tools, vec!["diagnostics/echo", "twin/ECHO"]);
    let mut client = servers.client();
    let outcome = client.run("echo", json!({ "value": 1 })).unwrap();
    assert!(outcome.is_error);
    assert!(outcome.text.contains("withheld"), "{}", outcome.text);
    let listed = client.tools("diagnostics").unwrap().text;
    assert!(listed.contains("name: sleep"), "{listed}");
    assert!(!listed.contains("name: echo"), "{listed}");
    // Other servers are unaffected.
    let mut ops = servers.client_of(ServerName::Ops, Default::default());
    assert!(!ops.run("echo", json!({ "value": 1 })).unwrap().is_error);
    servers.stop();
}

#[derive(Default)]
struct NoticeHost {
    notices: Mutex<Vec<ide_mcp_server::page_delivery::SplitModeNotice>>,
}

impl Host for NoticeHost {
    fn split_mode_notice(&self, notice: &ide_mcp_server::page_delivery::SplitModeNotice) {
        self.notices.lock().unwrap().push(notice.clone());
    }
}

#[test]
fn split_mode_tells_the_host_with_a_block_for_every_live_server() {
    use ide_mcp_server::mcp_config::BridgeLauncher;
    use ide_mcp_server::page_delivery::{DeliveryState, PageDelivery, RouteOutcome};

    let host = Arc::new(NoticeHost::default());
    let mut setup = Setup::default();
    setup.host = Some(host.clone());
    setup.domains = vec![
        diagnostics_domain(ServerName::Code),
        diagnostics_domain(ServerName::Vcs),
    ];
    let servers = TestServers::start_with(setup);
    let delivery = PageDelivery::default();
    delivery.register_route("jcef");
    delivery.register_route("remote-browser");
    assert_eq!(
        delivery.report("jcef", RouteOutcome::Failed("no JCEF".into())),
        DeliveryState::Waiting
    );
    assert_eq!(
        delivery.report("remote-browser", RouteOutcome::Failed("no frontend".into())),
        DeliveryState::EnterSplitMode
    );
    let launcher = BridgeLauncher::Native {
        executable: "/usr/local/bin/ide-mcp".into(),
    };
    servers.servers().announce_split_mode(&launcher).unwrap();
    let notices = host.notices.lock().unwrap().clone();
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].message, SPLIT_MODE_MESSAGE);
    let block = &notices[0].configuration["mcpServers"];
    let names: Vec<&String> = block.as_object().unwrap().keys().collect();
    assert_eq!(names, ["code", "vcs"]);
    let socket = block["vcs"]["args"][1].as_str().unwrap();
    assert!(std::path::Path::new(socket).exists());
    // The block works: the socket it names answers.
    let mut client = ide_mcp_server::client::Client::connect(std::path::Path::new(socket)).unwrap();
    assert!(!client.run("echo", json!({ "value": 1 })).unwrap().is_error);
    servers.stop();
}

struct Panicking;

impl SecurityGuard for Panicking {
    fn judge(&self, _request: &GuardRequest) -> VerdictFuture {
        panic!("guard bug");
    }
}

#[test]
fn a_panicking_guard_is_a_denial_and_the_connection_goes_on() {
    let mut setup = Setup::default();
    setup.guard = Arc::new(Panicking);
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    let outcome = client.run("echo", json!({ "value": 1 })).unwrap();
    assert!(outcome.is_error);
    assert!(outcome.text.contains("crashed"), "{}", outcome.text);
    client.request("ping", json!({})).unwrap();
    servers.stop();
}
