//! Where `ide-mcp bridge` connects: a socket given on the command line (its token file beside
//! it, or named with `--token-file` for a forwarded socket), or the live set that serves a
//! project directory, looked up in the per-user registry of live server sets every time the
//! bridge (re)connects.

use std::path::PathBuf;

use ide_mcp_server::client::token_file_beside;
use ide_mcp_server::live_sets::{absolute_project_directory, endpoint_for_project};
use ide_mcp_server::ServerName;

/// What the bridge was told to reach.
#[derive(Debug, Clone)]
pub enum BridgeTarget {
    /// One socket, always the same.
    Socket {
        /// The socket.
        socket: PathBuf,
        /// The token file.
        token_file: PathBuf,
    },
    /// Whichever live set serves `directory` when the bridge connects.
    Project {
        /// The project directory, absolute (canonical where it exists).
        directory: PathBuf,
        /// The server of that set.
        server: ServerName,
    },
}

/// A socket to connect to and the token file that goes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The socket.
    pub socket: PathBuf,
    /// Its token file.
    pub token_file: PathBuf,
}

impl BridgeTarget {
    /// The target of `ide-mcp bridge [--project DIR | --token-file FILE] TARGET`.
    pub fn from_args(
        project: Option<PathBuf>,
        token_file: Option<PathBuf>,
        target: String,
    ) -> Result<BridgeTarget, String> {
        match project {
            Some(directory) => {
                let server = target
                    .parse::<ServerName>()
                    .map_err(|error| error.to_string())?;
                Ok(BridgeTarget::Project {
                    directory: absolute_project_directory(&directory)?,
                    server,
                })
            }
            None => {
                let socket = PathBuf::from(target);
                let token_file = token_file.unwrap_or_else(|| token_file_beside(&socket));
                Ok(BridgeTarget::Socket { socket, token_file })
            }
        }
    }

    /// Whether the target is found again after the connection is lost.
    pub fn reconnects(&self) -> bool {
        matches!(self, BridgeTarget::Project { .. })
    }

    /// The socket to connect to now; for a project, the set that serves it now. The error
    /// names what was found instead.
    pub fn resolve(&self) -> Result<Endpoint, String> {
        match self {
            BridgeTarget::Socket { socket, token_file } => Ok(Endpoint {
                socket: socket.clone(),
                token_file: token_file.clone(),
            }),
            BridgeTarget::Project { directory, server } => {
                let endpoint = endpoint_for_project(directory, *server)?;
                Ok(Endpoint {
                    socket: endpoint.socket,
                    token_file: endpoint.token_file,
                })
            }
        }
    }
}
