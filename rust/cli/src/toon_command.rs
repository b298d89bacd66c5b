//! `ide-mcp toon encode|decode`: JSON to TOON and back, through standard input and output.
//!
//! Input that does not parse is reported on standard error with its line and column, and the
//! command exits with status 1, so scripts can tell bad input from success.

use std::io::{self, Read, Write};
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use ide_mcp_protocol::json::{self, parse_strict, JsonError};
use ide_mcp_protocol::toon::{self, DecodeOptions, Delimiter, EncodeOptions};

/// Arguments of `ide-mcp toon`.
#[derive(Debug, Args)]
pub struct ToonArgs {
    #[command(subcommand)]
    direction: Direction,
}

#[derive(Debug, Subcommand)]
enum Direction {
    /// Read JSON on standard input, write TOON on standard output.
    Encode {
        /// The delimiter of inline arrays and table rows.
        #[arg(long, value_enum, default_value_t = DelimiterArg::Comma)]
        delimiter: DelimiterArg,
        /// Spaces per indentation level.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
        indent: u16,
    },
    /// Read TOON on standard input, write compact JSON and a newline on standard output.
    Decode {
        /// Spaces per indentation level the input uses.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
        indent: u16,
        /// Accept documents that break strict mode (array counts, exact indentation, blank
        /// lines in arrays). Duplicate keys are rejected either way.
        #[arg(long)]
        lenient: bool,
    },
}

/// The delimiter names accepted on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum DelimiterArg {
    Comma,
    Tab,
    Pipe,
}

impl From<DelimiterArg> for Delimiter {
    fn from(delimiter: DelimiterArg) -> Delimiter {
        match delimiter {
            DelimiterArg::Comma => Delimiter::Comma,
            DelimiterArg::Tab => Delimiter::Tab,
            DelimiterArg::Pipe => Delimiter::Pipe,
        }
    }
}

/// Runs `ide-mcp toon ...`.
pub fn run(args: ToonArgs) -> ExitCode {
    let mut input = Vec::new();
    if let Err(error) = io::stdin().lock().read_to_end(&mut input) {
        eprintln!("ide-mcp: cannot read standard input: {error}");
        return ExitCode::FAILURE;
    }
    let output = match args.direction {
        Direction::Encode { delimiter, indent } => encode_json(&input, delimiter, indent),
        Direction::Decode { indent, lenient } => decode_toon(&input, indent, lenient),
    };
    match output {
        Ok(text) => write_stdout(&text),
        Err(message) => {
            eprintln!("ide-mcp: {message}");
            ExitCode::FAILURE
        }
    }
}

fn encode_json(input: &[u8], delimiter: DelimiterArg, indent: u16) -> Result<String, String> {
    let value = parse_strict(input)
        .map_err(|error| format!("invalid JSON {}", describe_json_error(&error)))?;
    let options = EncodeOptions {
        indent: usize::from(indent),
        delimiter: delimiter.into(),
    };
    let mut text = toon::encode(&value, &options);
    if !text.is_empty() {
        text.push('\n');
    }
    Ok(text)
}

fn decode_toon(input: &[u8], indent: u16, lenient: bool) -> Result<String, String> {
    let options = DecodeOptions {
        indent: usize::from(indent),
        strict: !lenient,
        ..DecodeOptions::default()
    };
    let value = toon::decode_bytes(input, &options).map_err(|error| {
        format!(
            "invalid TOON at line {}, column {}: {}",
            error.line(),
            error.column(),
            error.message()
        )
    })?;
    let mut text = json::to_string(&value);
    text.push('\n');
    Ok(text)
}

/// `at line L, column C: <reason>` for a JSON error, with the position said once, up front.
pub fn describe_json_error(error: &JsonError) -> String {
    // serde_json's message ends with the position in its own words; that copy is dropped.
    let position = format!(" at line {} column {}", error.line(), error.column());
    let full = error.to_string();
    let reason = full.strip_suffix(&position).unwrap_or(&full);
    format!(
        "at line {}, column {}: {reason}",
        error.line(),
        error.column()
    )
}

fn write_stdout(text: &str) -> ExitCode {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("ide-mcp: cannot write standard output: {error}");
            ExitCode::FAILURE
        }
    }
}
