//! The four servers of a project.

use std::fmt;
use std::str::FromStr;

/// One of the four MCP servers each open project gets. Every server has its own socket
/// (`<name>.sock`) and exists only while at least one live domain is registered on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ServerName {
    /// Code insight: files, search, navigation.
    Code,
    /// Running things: tasks, tests, run configurations.
    Run,
    /// Version control.
    Vcs,
    /// The IDE itself: status, settings, diagnostics.
    Ops,
}

impl ServerName {
    /// All servers, in the order sockets are created and listed.
    pub const ALL: [ServerName; 4] = [
        ServerName::Code,
        ServerName::Run,
        ServerName::Vcs,
        ServerName::Ops,
    ];

    /// The lowercase name used in socket file names and in the `mcpServers` block.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerName::Code => "code",
            ServerName::Run => "run",
            ServerName::Vcs => "vcs",
            ServerName::Ops => "ops",
        }
    }

    /// The socket's file name inside the runtime directory.
    pub fn socket_file_name(self) -> &'static str {
        ide_mcp_protocol::contract::SOCKET_FILE_NAMES[self as usize]
    }
}

/// One `T` for each of the four servers, found by the server's index rather than hashed:
/// per-call lookups (a server's handler slots, its tools) cost no hash of the name.
#[derive(Debug, Clone, Default)]
pub(crate) struct PerServer<T>([T; 4]);

impl<T> PerServer<T> {
    /// Each server's value, made by `make`.
    pub(crate) fn from_fn(mut make: impl FnMut(ServerName) -> T) -> Self {
        PerServer(ServerName::ALL.map(&mut make))
    }

    /// The value of `server`.
    pub(crate) fn get(&self, server: ServerName) -> &T {
        &self.0[server as usize]
    }

    /// The value of `server`, to change.
    pub(crate) fn get_mut(&mut self, server: ServerName) -> &mut T {
        &mut self.0[server as usize]
    }
}

impl fmt::Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a server name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown server `{0}`: expected one of code, run, vcs, ops")]
pub struct UnknownServerName(pub String);

impl FromStr for ServerName {
    type Err = UnknownServerName;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        ServerName::ALL
            .into_iter()
            .find(|server| server.as_str() == name)
            .ok_or_else(|| UnknownServerName(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_has_its_own_value() {
        let mut values = PerServer::from_fn(ServerName::as_str);
        for server in ServerName::ALL {
            assert_eq!(*values.get(server), server.as_str());
        }
        *values.get_mut(ServerName::Vcs) = "changed";
        assert_eq!(*values.get(ServerName::Vcs), "changed");
        assert_eq!(*values.get(ServerName::Ops), "ops");
    }

    #[test]
    fn names_round_trip_through_from_str() {
        for server in ServerName::ALL {
            assert_eq!(server.as_str().parse::<ServerName>(), Ok(server));
        }
    }

    #[test]
    fn unknown_name_is_an_error_naming_the_choices() {
        let error = "build".parse::<ServerName>().expect_err("not a server");
        assert!(error.to_string().contains("code, run, vcs, ops"));
    }
}
