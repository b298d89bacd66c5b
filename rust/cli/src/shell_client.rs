//! `ide-mcp domains|tools|run`: call a server's meta-tools from a shell.
//!
//! Each command connects, performs the MCP handshake, makes one call and prints the result
//! text (TOON, meant for a person or a model) as it is. Exit status: 0 on success; 1 when the
//! server answered with an error result (its text goes to standard error); 2 when the call
//! could not be made at all (connection, token, protocol), with a message saying what to try.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use ide_mcp_protocol::json::parse_strict;
use ide_mcp_server::client::{
    Client, ClientError, ToolOutcome, Wire, INVALID_REQUEST_CODE, REQUEST_REJECTED_MESSAGE,
};
use serde_json::json;

use crate::toon_command::describe_json_error;
use ide_mcp_protocol::contract::READY_LINE_PREFIX;

/// The exit status of a call that could not be made.
const CALL_FAILED: u8 = 2;

/// How to reach the server, shared by every shell command.
#[derive(Debug, Args)]
pub struct ConnectionArgs {
    /// The server's socket, e.g. <runtime dir>/code.sock; the token is read from the `token`
    /// file beside it.
    socket: PathBuf,
    /// The wire to speak: length-prefixed TOON frames, or newline-delimited JSON.
    #[arg(long, value_enum, default_value_t = WireArg::Framed)]
    wire: WireArg,
    /// Give up when the server sends nothing for this many seconds (default: wait as long as
    /// the call takes).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum WireArg {
    Framed,
    Lines,
}

/// Arguments of `ide-mcp domains`.
#[derive(Debug, Args)]
pub struct DomainsArgs {
    #[command(flatten)]
    connection: ConnectionArgs,
}

/// Arguments of `ide-mcp tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    #[command(flatten)]
    connection: ConnectionArgs,
    /// The domain whose tools to list, as `ide-mcp domains` names it.
    domain: String,
}

/// Arguments of `ide-mcp run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    connection: ConnectionArgs,
    /// The tool to run, as `ide-mcp tools` names it.
    tool: String,
    /// The tool's arguments as one JSON object (default `{}`).
    #[arg(value_name = "JSON_ARGS")]
    args: Option<String>,
}

/// Runs `ide-mcp domains`.
pub fn run_domains(args: DomainsArgs) -> ExitCode {
    call(&args.connection, "domains", Client::domains)
}

/// Runs `ide-mcp tools`.
pub fn run_tools(args: ToolsArgs) -> ExitCode {
    call(&args.connection, "tools", |client| {
        client.tools(&args.domain)
    })
}

/// Runs `ide-mcp run`.
pub fn run_tool(args: RunArgs) -> ExitCode {
    let tool_args = match &args.args {
        None => json!({}),
        Some(text) => match parse_strict(text.as_bytes()) {
            Ok(value) => value,
            Err(error) => {
                eprintln!(
                    "ide-mcp: the arguments of {} are not valid JSON {}",
                    args.tool,
                    describe_json_error(&error)
                );
                return ExitCode::from(CALL_FAILED);
            }
        },
    };
    call(&args.connection, "run", |client| {
        client.run(&args.tool, tool_args)
    })
}

/// Connects, initializes, makes one call with `make_call` and reports its outcome.
fn call(
    connection: &ConnectionArgs,
    meta_tool: &str,
    make_call: impl FnOnce(&mut Client) -> Result<ToolOutcome, ClientError>,
) -> ExitCode {
    let socket = connection.socket.as_path();
    let outcome = connect(connection).and_then(|mut client| {
        client.initialize().map_err(|error| ("initialize", error))?;
        make_call(&mut client).map_err(|error| (meta_tool, error))
    });
    match outcome {
        Ok(ToolOutcome {
            is_error: false,
            text,
        }) => print_text(&mut io::stdout().lock(), &text),
        Ok(ToolOutcome {
            is_error: true,
            text,
        }) => {
            print_text(&mut io::stderr().lock(), &text);
            ExitCode::FAILURE
        }
        Err((step, error)) => {
            if matches!(error, ClientError::Connect { .. }) {
                // The error already names the socket and what to check.
                eprintln!("ide-mcp: {error}");
            } else {
                eprintln!("ide-mcp: {step} on {} failed: {error}", socket.display());
            }
            if let Some(hint) = hint_for(&error, socket) {
                eprintln!("ide-mcp: {hint}");
            }
            ExitCode::from(CALL_FAILED)
        }
    }
}

fn connect(connection: &ConnectionArgs) -> Result<Client, (&'static str, ClientError)> {
    let wire = match connection.wire {
        WireArg::Framed => Wire::Frames,
        WireArg::Lines => Wire::Lines,
    };
    let client =
        Client::connect_with(&connection.socket, wire).map_err(|error| ("connecting", error))?;
    client
        .set_read_timeout(connection.timeout.map(Duration::from_secs))
        .map_err(|error| ("connecting", error))?;
    Ok(client)
}

/// What a person can try after `error`, when there is more to say than the error itself.
fn hint_for(error: &ClientError, socket: &Path) -> Option<String> {
    match error {
        ClientError::Rpc { code, message, .. }
            if *code == INVALID_REQUEST_CODE && message == REQUEST_REJECTED_MESSAGE =>
        {
            Some(format!(
                "the token beside {} was not accepted even after re-reading it; the servers may have restarted under another directory (see idea.log for `{}`)",
                socket.display(),
                READY_LINE_PREFIX.trim_end()
            ))
        }
        ClientError::TokenFile { .. } => Some(
            "the servers write the token beside their sockets; if the directory is gone, the project was closed or the IDE restarted".to_owned(),
        ),
        ClientError::Closed | ClientError::Stream(_) | ClientError::Io(_) => Some(
            "the server may have stopped or timed out; try again, or pass --timeout for a long call".to_owned(),
        ),
        _ => None,
    }
}

fn print_text(out: &mut impl Write, text: &str) -> ExitCode {
    let ending = if text.ends_with('\n') { "" } else { "\n" };
    match write!(out, "{text}{ending}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}
