//! Project files: confined access and search.
//!
//! Everything a tool does with the files of a project, made to hold against a hostile
//! repository and a hostile or confused client:
//!
//! - **Confined access** ([`ProjectFiles`]): the root is opened once, and every path is opened
//!   beneath its descriptor (`openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` on Linux, an
//!   `openat(O_NOFOLLOW)` walk elsewhere), so a symbolic link swapped in mid-way cannot lead
//!   out; the type is checked with `fstat` on the opened descriptor (a FIFO or a device is
//!   refused, and opening one never blocks), and the content is read through it.
//! - **Search** ([`search::search_text`], [`search::find_files`]): ripgrep's libraries, linear
//!   time whatever the pattern, under a deadline and a cancellation flag.
//! - **The credential rule** ([`credentials`]): by name and by content, on every file a tool
//!   touches, unless the Security Guard explicitly allowed the call.
//!
//! No JNI and no server here: `ide-mcp-jni` exposes it to Java, and `ide-mcp-server`'s
//! baseline policy shares the rule by name.

mod confine;
pub mod credentials;
mod error;
mod files;
pub mod search;

pub use confine::{Entry, EntryKind};
pub use error::{Error, Result};
pub use files::{Credentials, Lines, ProjectFiles, ReadLimits, BINARY_SNIFF_BYTES};
