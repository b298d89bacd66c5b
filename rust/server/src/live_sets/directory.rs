//! Where the registry of live server sets is, and opening it: a directory of this user's
//! only, held to the checks of the runtime directory (owned by us, mode 0700, never a symlink).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::platform::fs::{self, Dir, Errno};
use crate::runtime_dir::{check_private_dir, fstat, open_or_create_private_dir, RuntimeDirError};

use super::LiveSetsError;

/// The environment variable that names the registry directory itself.
pub const REGISTRY_ENV: &str = "IDE_MCP_REGISTRY";

/// The registry's name under `$XDG_RUNTIME_DIR` or the user's cache directory.
pub const REGISTRY_DIR_NAME: &str = "ide-mcp-live-sets";

/// The registry directory: `$IDE_MCP_REGISTRY` when set, else
/// `$XDG_RUNTIME_DIR/ide-mcp-live-sets` (a per-user tmpfs, emptied at logout), else
/// `$XDG_CACHE_HOME/ide-mcp-live-sets`, else `$HOME/.cache/ide-mcp-live-sets`. This is the one
/// place that chooses it; another operating system chooses here.
pub fn registry_path() -> Result<PathBuf, LiveSetsError> {
    registry_path_from(|name| std::env::var_os(name))
}

fn registry_path_from(env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, LiveSetsError> {
    let absolute = |name: &str| {
        env(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    if let Some(named) = absolute(REGISTRY_ENV) {
        return Ok(named);
    }
    if let Some(runtime) = absolute("XDG_RUNTIME_DIR") {
        return Ok(runtime.join(REGISTRY_DIR_NAME));
    }
    let cache =
        absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|home| home.join(".cache")));
    cache
        .map(|cache| cache.join(REGISTRY_DIR_NAME))
        .ok_or(LiveSetsError::NoDirectory)
}

/// The open registry directory; every record is read and written relative to it.
#[derive(Debug)]
pub(super) struct RegistryDir {
    pub(super) path: PathBuf,
    pub(super) fd: Dir,
}

impl RegistryDir {
    /// Opens the registry at `path`, creating it (mode 0700) when it does not exist, and
    /// creating its parent too when that is missing (a fresh `~/.cache`).
    pub(super) fn open_or_create(path: &Path) -> Result<RegistryDir, LiveSetsError> {
        let (parent, name) = split(path)?;
        if !parent.exists() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(parent).map_err(|source| LiveSetsError::Io {
                action: "create the parent of the registry",
                path: parent.to_owned(),
                source,
            })?;
        }
        let parent_fd = open_parent(parent)?;
        let fd =
            open_or_create_private_dir(&parent_fd, name, path).map_err(LiveSetsError::Directory)?;
        Ok(RegistryDir {
            path: path.to_owned(),
            fd,
        })
    }

    /// Opens the registry at `path` if it exists, with the same checks; `None` when it (or its
    /// parent) does not exist: no set has registered yet.
    pub(super) fn open_existing(path: &Path) -> Result<Option<RegistryDir>, LiveSetsError> {
        let (parent, name) = split(path)?;
        let parent_fd = match fs::open_dir(parent) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(errno) => return Err(io_refusal("open the parent of", parent, errno)),
        };
        let fd = match fs::open_dir_at(&parent_fd, name) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(errno) => {
                return Err(LiveSetsError::Directory(crate::runtime_dir::refusal_or_io(
                    &parent_fd, name, path, errno,
                )))
            }
        };
        check_private_dir(&fstat(&fd, path).map_err(LiveSetsError::Directory)?, path)
            .map_err(LiveSetsError::Directory)?;
        Ok(Some(RegistryDir {
            path: path.to_owned(),
            fd,
        }))
    }
}

/// The parent (followed, like a base directory: `/run/user/1000` may sit under a symlink) and
/// the registry's own name (never followed).
fn split(path: &Path) -> Result<(&Path, &str), LiveSetsError> {
    let refused = |reason: &str| {
        LiveSetsError::Directory(RuntimeDirError::Insecure {
            path: path.to_owned(),
            reason: reason.to_owned(),
            hint: format!("set {REGISTRY_ENV} to an absolute path of a directory of your own"),
        })
    };
    if !path.is_absolute() {
        return Err(refused("it is not an absolute path"));
    }
    let parent = path
        .parent()
        .ok_or_else(|| refused("it is the root directory"))?;
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .filter(|name| *name != "..")
        .ok_or_else(|| refused("its last component is not a plain UTF-8 name"))?;
    Ok((parent, name))
}

fn open_parent(parent: &Path) -> Result<Dir, LiveSetsError> {
    fs::open_dir(parent).map_err(|errno| io_refusal("open", parent, errno))
}

fn io_refusal(action: &'static str, path: &Path, errno: Errno) -> LiveSetsError {
    LiveSetsError::Directory(RuntimeDirError::Io {
        action,
        path: path.to_owned(),
        source: errno.into(),
        hint: "check that it exists and is a directory we can enter",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        }
    }

    /// An absolute path on every OS (a drive in front on Windows).
    fn absolute(path: &str) -> String {
        if cfg!(windows) {
            format!("C:{path}")
        } else {
            path.to_owned()
        }
    }

    #[test]
    fn the_registry_is_chosen_in_the_documented_order() {
        let (named, runtime, cache, home, h) = (
            absolute("/named"),
            absolute("/run/user/7"),
            absolute("/c"),
            absolute("/home/me"),
            absolute("/h"),
        );
        let all = [
            (REGISTRY_ENV, named.as_str()),
            ("XDG_RUNTIME_DIR", runtime.as_str()),
            ("XDG_CACHE_HOME", cache.as_str()),
            ("HOME", home.as_str()),
        ];
        let path = |pairs: &[(&str, &str)]| registry_path_from(env_of(pairs)).ok();
        assert_eq!(path(&all), Some(PathBuf::from(&named)));
        assert_eq!(
            path(&all[1..]),
            Some(PathBuf::from(&runtime).join(REGISTRY_DIR_NAME))
        );
        assert_eq!(
            path(&all[2..]),
            Some(PathBuf::from(&cache).join(REGISTRY_DIR_NAME))
        );
        assert_eq!(
            path(&all[3..]),
            Some(PathBuf::from(&home).join(".cache").join(REGISTRY_DIR_NAME))
        );
        assert_eq!(
            path(&[("XDG_RUNTIME_DIR", "relative"), ("HOME", h.as_str())]),
            Some(PathBuf::from(&h).join(".cache").join(REGISTRY_DIR_NAME)),
            "a relative XDG_RUNTIME_DIR is ignored, as the XDG spec says"
        );
        assert!(matches!(
            registry_path_from(env_of(&[])),
            Err(LiveSetsError::NoDirectory)
        ));
    }
}
