//! `ide-mcp`: the command-line side of the IDE's MCP servers.
//!
//! Each subcommand lives in its own module and is dispatched to that module's
//! `run(args) -> ExitCode`. Standard output carries only the command's result (for the bridge,
//! only JSON-RPC lines); every diagnostic goes to standard error.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bridge;
mod bridge_target;
mod list;
mod shell_client;
mod test_server;
mod toon_command;

/// Talk to the IDE's MCP servers, or convert between JSON and TOON.
#[derive(Debug, Parser)]
#[command(name = "ide-mcp", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert JSON to TOON or TOON to JSON (standard input to standard output).
    Toon(toon_command::ToonArgs),
    /// Bridge MCP over stdio (JSON-RPC lines) to one server socket, or to a project's server.
    Bridge(bridge::BridgeArgs),
    /// List this user's live server sets (project root, socket directory, servers, pid).
    List(list::ListArgs),
    /// List a server's live domains.
    Domains(shell_client::DomainsArgs),
    /// List the tools of one domain.
    Tools(shell_client::ToolsArgs),
    /// Run one tool with JSON arguments.
    Run(shell_client::RunArgs),
    /// Serve the four servers with the `diagnostics` domain, for tests and benchmarks.
    Testserver(test_server::TestServerArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Toon(args) => toon_command::run(args),
        Command::Bridge(args) => bridge::run(args),
        Command::List(args) => list::run(args),
        Command::Domains(args) => shell_client::run_domains(args),
        Command::Tools(args) => shell_client::run_tools(args),
        Command::Run(args) => shell_client::run_tool(args),
        Command::Testserver(args) => test_server::run(args),
    }
}
