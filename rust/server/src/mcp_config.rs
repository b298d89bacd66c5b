//! The `mcpServers` block a client needs to reach the live servers through a stdio bridge:
//! what the host hands to a client it launches, and what split mode offers to copy.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::server_name::ServerName;

/// The Java class that bridges stdio to a socket, shipped in the plugin's jar.
pub const JAVA_BRIDGE_CLASS: &str = "dev.lain.claudejb.mcp.StdioBridge";

/// How a client starts the stdio bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BridgeLauncher {
    /// The IDE's own Java runs the bridge class from the plugin's jars: certainly there.
    Java {
        /// The Java home (the IDE's runtime); the command is `<java_home>/bin/java`.
        java_home: PathBuf,
        /// The plugin's directory; the class path is `<plugin_dir>/lib/*`.
        plugin_dir: PathBuf,
    },
    /// The native `ide-mcp` executable, when the plugin ships it: `ide-mcp bridge <socket>`.
    Native {
        /// The executable's path.
        executable: PathBuf,
    },
}

impl BridgeLauncher {
    /// The `{type, command, args}` entry for one socket.
    pub fn server_entry(&self, socket: &Path) -> Value {
        let socket = socket.to_string_lossy();
        match self {
            BridgeLauncher::Java {
                java_home,
                plugin_dir,
            } => json!({
                "type": "stdio",
                "command": java_home.join("bin").join("java").to_string_lossy(),
                "args": [
                    "-cp",
                    format!("{}/lib/*", plugin_dir.to_string_lossy()),
                    JAVA_BRIDGE_CLASS,
                    socket,
                ],
            }),
            BridgeLauncher::Native { executable } => json!({
                "type": "stdio",
                "command": executable.to_string_lossy(),
                "args": ["bridge", socket],
            }),
        }
    }

    /// The entry for `server`: with a `project` (a root the set is registered under), the
    /// native bridge's stable form `ide-mcp bridge --project <root> <server>`, which finds the
    /// set through the per-user registry at every start; else the socket itself, whose path
    /// changes with every start (the Java bridge knows only that form).
    pub fn entry_for(&self, server: ServerName, socket: &Path, project: Option<&Path>) -> Value {
        match (self, project) {
            (BridgeLauncher::Native { executable }, Some(project)) => json!({
                "type": "stdio",
                "command": executable.to_string_lossy(),
                "args": ["bridge", "--project", project.to_string_lossy(), server.as_str()],
            }),
            _ => self.server_entry(socket),
        }
    }
}

/// `{"mcpServers": {...}}` with one entry per live server, in the servers' order; `project`
/// as [`BridgeLauncher::entry_for`] takes it.
pub fn mcp_servers_block(
    directory: &Path,
    live_servers: &[ServerName],
    launcher: &BridgeLauncher,
    project: Option<&Path>,
) -> Value {
    let mut servers = Map::new();
    for server in ServerName::ALL {
        if live_servers.contains(&server) {
            let socket = directory.join(server.socket_file_name());
            servers.insert(
                server.as_str().to_owned(),
                launcher.entry_for(server, &socket, project),
            );
        }
    }
    json!({ "mcpServers": servers })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_java_launcher_matches_the_contract() {
        let block = mcp_servers_block(
            Path::new("/tmp/claude-ide-mcp/abc"),
            &[ServerName::Code],
            &BridgeLauncher::Java {
                java_home: "/opt/ide/jbr".into(),
                plugin_dir: "/opt/ide/plugins/claudejb".into(),
            },
            Some(Path::new("/home/me/app")),
        );
        // Paths are joined with the OS's separator (a backslash on Windows).
        let java = Path::new("/opt/ide/jbr").join("bin").join("java");
        let socket = Path::new("/tmp/claude-ide-mcp/abc").join("code.sock");
        assert_eq!(
            block,
            json!({"mcpServers": {"code": {
                "type": "stdio",
                "command": java.to_string_lossy(),
                "args": ["-cp", "/opt/ide/plugins/claudejb/lib/*", "dev.lain.claudejb.mcp.StdioBridge", socket.to_string_lossy()],
            }}})
        );
    }

    #[test]
    fn the_native_launcher_lists_every_live_server_in_order() {
        let block = mcp_servers_block(
            Path::new("/d"),
            &[ServerName::Ops, ServerName::Code],
            &BridgeLauncher::Native {
                executable: "/usr/bin/ide-mcp".into(),
            },
            None,
        );
        let names: Vec<&String> = block["mcpServers"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(names, ["code", "ops"]);
        assert_eq!(
            block["mcpServers"]["ops"]["args"],
            json!(["bridge", Path::new("/d").join("ops.sock").to_string_lossy()])
        );
    }

    #[test]
    fn a_registered_project_gets_the_stable_native_form() {
        let block = mcp_servers_block(
            Path::new("/d"),
            &[ServerName::Code, ServerName::Vcs],
            &BridgeLauncher::Native {
                executable: "/usr/bin/ide-mcp".into(),
            },
            Some(Path::new("/home/me/app")),
        );
        assert_eq!(
            block["mcpServers"]["vcs"],
            json!({"type": "stdio", "command": "/usr/bin/ide-mcp",
                   "args": ["bridge", "--project", "/home/me/app", "vcs"]})
        );
    }
}
