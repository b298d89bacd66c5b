//! Our servers, as an IDE would start them: all four, each with the diagnostics domain.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ide_mcp_server::client::{read_token_file, token_file_beside, ClientError};
use ide_mcp_server::diagnostics::diagnostics_domain;
use ide_mcp_server::{AllowAll, IdeMcpServers, ServerConfig, ServerName, ServersError};

use crate::endpoint::{CallShape, Endpoint};
use crate::wire::Wire;

/// Starts the four servers with the default configuration under `base`.
pub fn start(base: &Path) -> Result<IdeMcpServers, ServersError> {
    start_with(base, ServerConfig::default())
}

/// Starts the four servers with `config` under `base`.
pub fn start_with(base: &Path, config: ServerConfig) -> Result<IdeMcpServers, ServersError> {
    let mut builder = IdeMcpServers::builder([base.to_path_buf()])
        .config(config)
        .guard(Arc::new(AllowAll));
    for server in ServerName::ALL {
        builder = builder.domain(diagnostics_domain(server));
    }
    builder.start()
}

/// The socket of `server` in the runtime directory `directory`.
pub fn socket(directory: &Path, server: ServerName) -> PathBuf {
    directory.join(server.socket_file_name())
}

/// An endpoint for `server` in `directory`, with the current token.
pub fn endpoint(directory: &Path, server: ServerName, wire: Wire) -> Result<Endpoint, ClientError> {
    let socket = socket(directory, server);
    let token = read_token_file(&token_file_beside(&socket))?;
    Ok(Endpoint {
        socket,
        wire,
        token: Some(token),
        shape: CallShape::MetaRun,
    })
}

/// `count` endpoints spread round-robin over the four servers, as an agent that uses all of
/// them would be. Each server caps the handlers it runs at once, so spreading also keeps 16
/// connections × 16 calls within the per-server caps an IDE would see.
pub fn spread_endpoints(
    directory: &Path,
    wire: Wire,
    count: usize,
) -> Result<Vec<Endpoint>, ClientError> {
    (0..count)
        .map(|index| {
            endpoint(
                directory,
                ServerName::ALL[index % ServerName::ALL.len()],
                wire,
            )
        })
        .collect()
}
