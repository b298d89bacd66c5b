//! Why an operation on the project's files did not happen, in words the model can act on.
//! Every message names the path as it was given (relative to the project root), never the
//! absolute path of something outside it.

use std::io;

/// The result of every operation of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Why an operation on the project's files failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The path argument itself is unacceptable (absolute, `..`, a NUL byte).
    #[error("`{path}` is not a path inside the project: {why}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Nothing exists at the path.
    #[error(
        "`{0}` does not exist in the project (paths are relative to the project root; \
         list_directory shows what is there)"
    )]
    NotFound(String),
    /// Resolving the path would leave the project (a symlink pointing out, or one swapped in).
    #[error("`{0}` leads outside the project (through a symbolic link); it cannot be opened")]
    Escapes(String),
    /// The path is a directory where a file was asked for.
    #[error("`{0}` is a directory; use list_directory")]
    IsDirectory(String),
    /// The path is a file where a directory was asked for.
    #[error("`{0}` is a file, not a directory; use read_file")]
    NotDirectory(String),
    /// A FIFO, a socket, a device: never read.
    #[error("`{path}` is not a regular file (it is {kind}); only regular files are read")]
    NotRegularFile {
        /// The path as given.
        path: String,
        /// What it is instead.
        kind: &'static str,
    },
    /// Larger than the caller's limit.
    #[error("`{path}` is {size} bytes, {what}")]
    TooLarge {
        /// The path as given.
        path: String,
        /// Its size.
        size: u64,
        /// What to do about it (the limit and the way around it).
        what: String,
    },
    /// A NUL byte near the start: not text.
    #[error("`{path}` is a binary file ({size} bytes); read_file reads text files only")]
    Binary {
        /// The path as given.
        path: String,
        /// Its size.
        size: u64,
    },
    /// Not valid UTF-8.
    #[error("`{0}` is not UTF-8 text; read_file reads text files only")]
    NotUtf8(String),
    /// A line range that does not fit the file.
    #[error("{0}")]
    BadRange(String),
    /// The credential rule withheld it.
    #[error(
        "`{path}` is withheld: it {why}. The IDE's Security Guard did not explicitly allow \
         reading it"
    )]
    Credential {
        /// The path as given.
        path: String,
        /// What the rule recognised.
        why: String,
    },
    /// The search pattern does not compile.
    #[error("`pattern` is not a valid regular expression (Rust regex syntax): {0}")]
    BadPattern(String),
    /// The glob does not compile.
    #[error("`glob` is not a valid glob: {0}")]
    BadGlob(String),
    /// The caller cancelled the operation.
    #[error("cancelled")]
    Cancelled,
    /// This platform has no confined access (yet).
    #[error("confined file access is not supported on this platform: {0}")]
    Unsupported(&'static str),
    /// Any other failure of the operating system.
    #[error("cannot open `{path}`: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// What the system said.
        source: io::Error,
    },
}

impl Error {
    pub(crate) fn io(path: &str, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::NotFound {
            return Error::NotFound(path.to_owned());
        }
        Error::Io {
            path: path.to_owned(),
            source,
        }
    }
}
