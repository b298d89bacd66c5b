//! `ide-mcp list [--json]`: the live server sets of this user, from the per-user registry of
//! live server sets. Records of sets that are gone are removed on the way.

use std::process::ExitCode;

use clap::Args;
use ide_mcp_server::live_sets::{list_live_sets, LiveSetRecord};

/// Options of `ide-mcp list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array of the records instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `ide-mcp list`.
pub fn run(args: ListArgs) -> ExitCode {
    let listing = match list_live_sets() {
        Ok(listing) => listing,
        Err(error) => {
            eprintln!("ide-mcp list: {error}");
            return ExitCode::from(2);
        }
    };
    for ignored in &listing.ignored {
        eprintln!(
            "ide-mcp list: ignored {} in {}: {}",
            ignored.name,
            listing.directory.display(),
            ignored.reason
        );
    }
    if args.json {
        match serde_json::to_string_pretty(&listing.live) {
            Ok(text) => println!("{text}"),
            Err(error) => {
                eprintln!("ide-mcp list: cannot encode the records: {error}");
                return ExitCode::FAILURE;
            }
        }
        return ExitCode::SUCCESS;
    }
    if listing.live.is_empty() {
        eprintln!(
            "ide-mcp list: no live server sets (registry {})",
            listing.directory.display()
        );
        return ExitCode::SUCCESS;
    }
    println!("PROJECT\tSOCKETS\tSERVERS\tPID\tHOST");
    for record in &listing.live {
        println!("{}", row(record));
    }
    ExitCode::SUCCESS
}

/// One set as a tab-separated row: its roots, its socket directory, its servers, its pid and
/// its host.
fn row(record: &LiveSetRecord) -> String {
    let roots = record.roots_joined(",", "-");
    let servers = if record.servers.is_empty() {
        "-".to_owned()
    } else {
        record.servers.join(",")
    };
    format!(
        "{roots}\t{}\t{servers}\t{}\t{}",
        record.socket_directory.display(),
        record.pid,
        record.host
    )
}
