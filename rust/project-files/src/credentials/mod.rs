//! The credential rule: a file is withheld when its name says it holds credentials (`.env`,
//! `.aws/…`, `id_rsa`, `*.pem`, …) or its content shows one (a PEM or OpenSSH private key, a
//! well-known token format, a URL with a password in it). Every tool that touches a file asks
//! this rule: `read_file` refuses, `search_text` and `find_files` skip and count, and only a
//! caller that the Security Guard explicitly allowed (`AllowExplicitly`) reads past it.
//! `list_directory` shows names only, and names are not withheld.

mod content;
mod name;

pub use content::{find_in_content, ContentFinding};
pub use name::kind_by_name;

/// How many bytes of a file `find_files` examines for the content rule (it shows names only;
/// `read_file` and `search_text` examine every byte they would show).
pub const FIND_SCAN_BYTES: usize = 1024 * 1024;
