//! A server set's record in the per-user registry of live server sets: written at start with
//! private modes and no token, rewritten when the live servers change, removed on stop and on
//! drop, absent when the option turns it off.

// Unix only: these check modes by hand; the Windows protection is the platform seam's own
// tests' concern.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::OnceLock;

use ide_mcp_server::live_sets::{list_live_sets, LiveSetRecord};
use ide_mcp_server::mcp_config::BridgeLauncher;
use ide_mcp_server::{ServerConfig, ServerName};
use support::{Setup, TestServers};

/// One registry for this test binary (the environment is the process's).
fn registry() -> &'static Path {
    static REGISTRY: OnceLock<tempfile::TempDir> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            std::env::set_var("IDE_MCP_REGISTRY", dir.path().join("registry"));
            dir
        })
        .path()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

fn read_record(path: &Path) -> LiveSetRecord {
    LiveSetRecord::from_json(&std::fs::read(path).unwrap()).unwrap()
}

fn with_project(project: &Path) -> Setup {
    Setup {
        config: ServerConfig {
            project_roots: vec![project.to_owned()],
            host_name: "registry test".to_owned(),
            ..ServerConfig::default()
        },
        ..Setup::default()
    }
}

#[test]
fn a_started_set_is_registered_privately_without_the_token_and_removed_on_stop() {
    registry();
    let project = tempfile::tempdir().unwrap();
    let set = TestServers::start_with(with_project(project.path()));
    let record_path = set.servers().registry_record().unwrap();
    assert_eq!(mode(&record_path), 0o600);
    assert_eq!(mode(record_path.parent().unwrap()), 0o700);
    let record = read_record(&record_path);
    let directory = set.servers().directory().unwrap().to_owned();
    assert_eq!(record.socket_directory, directory);
    assert_eq!(
        record.project_roots,
        [std::fs::canonicalize(project.path()).unwrap()]
    );
    assert_eq!(record.servers, ["code", "run", "vcs", "ops"]);
    assert_eq!(record.pid, std::process::id() as i32);
    assert_eq!(record.host, "registry test");
    let token = std::fs::read_to_string(directory.join("token")).unwrap();
    let text = std::fs::read_to_string(&record_path).unwrap();
    assert!(!text.contains(token.trim()), "the record holds the token");
    assert!(list_live_sets()
        .unwrap()
        .live
        .iter()
        .any(|live| live.socket_directory == directory));

    set.stop();
    assert!(!record_path.exists(), "stop left the record");
}

#[test]
fn the_record_follows_the_live_servers_and_goes_when_the_handle_is_dropped() {
    registry();
    let project = tempfile::tempdir().unwrap();
    let mut set = TestServers::start_with(with_project(project.path()));
    let record_path = set.servers().registry_record().unwrap();
    assert!(set
        .servers()
        .remove_domain(ServerName::Run, "diagnostics")
        .unwrap());
    assert_eq!(read_record(&record_path).servers, ["code", "vcs", "ops"]);
    set.servers()
        .register_domain(ide_mcp_server::diagnostics::diagnostics_domain(
            ServerName::Run,
        ))
        .unwrap();
    assert_eq!(
        read_record(&record_path).servers,
        ["code", "run", "vcs", "ops"]
    );

    // The mcpServers block of a registered set uses the stable --project form.
    let block = set
        .servers()
        .mcp_servers_block(&BridgeLauncher::Native {
            executable: "/usr/bin/ide-mcp".into(),
        })
        .unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    assert_eq!(
        block["mcpServers"]["code"]["args"],
        serde_json::json!(["bridge", "--project", root, "code"])
    );

    drop(set.servers.take());
    assert!(!record_path.exists(), "dropping the handle left the record");
}

#[test]
fn registering_can_be_turned_off() {
    registry();
    let project = tempfile::tempdir().unwrap();
    let mut setup = with_project(project.path());
    setup.config.register_live_set = false;
    let set = TestServers::start_with(setup);
    assert_eq!(set.servers().registry_record(), None);
    assert_eq!(set.servers().registry_problem(), None);
    let directory = set.servers().directory().unwrap().to_owned();
    assert!(!list_live_sets()
        .unwrap()
        .live
        .iter()
        .any(|live| live.socket_directory == directory));
    // Not registered: the block names the socket, as a set that cannot be found must.
    let block = set
        .servers()
        .mcp_servers_block(&BridgeLauncher::Native {
            executable: "/usr/bin/ide-mcp".into(),
        })
        .unwrap();
    assert_eq!(
        block["mcpServers"]["code"]["args"],
        serde_json::json!(["bridge", directory.join("code.sock")])
    );
    set.stop();
}
