//! A running set's own record: written when the set starts, rewritten when its live servers
//! change, removed when it stops (or when the handle is dropped).

use std::path::{Path, PathBuf};

use crate::platform::fs::{self, Errno};

use crate::runtime_dir::create_private_file;

use super::directory::{registry_path, RegistryDir};
use super::listing::scan;
use super::record::LiveSetRecord;
use super::{LiveSetsError, RECORD_SUFFIX};

/// One set's record in the registry, removed on [`Registration::remove`] or drop.
#[derive(Debug)]
pub struct Registration {
    dir: RegistryDir,
    file_name: String,
    temp_name: String,
    removed: bool,
}

impl Registration {
    /// Registers `record` under the name `<id>.json` in the registry [`registry_path`] names,
    /// first removing the records of sets that are gone. `id` is the runtime directory's id.
    pub fn register(record: &LiveSetRecord, id: &str) -> Result<Registration, LiveSetsError> {
        Self::register_in(&registry_path()?, record, id)
    }

    /// Like [`register`](Self::register), in the registry directory `path`.
    pub fn register_in(
        path: &Path,
        record: &LiveSetRecord,
        id: &str,
    ) -> Result<Registration, LiveSetsError> {
        if id.is_empty()
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(LiveSetsError::Encode(format!(
                "{id:?} cannot name a record file"
            )));
        }
        let dir = RegistryDir::open_or_create(path)?;
        // The next start cleans up after sets that died without removing their record.
        let _ = scan(&dir);
        let registration = Registration {
            dir,
            file_name: format!("{id}{RECORD_SUFFIX}"),
            // A leading dot: readers skip it, so a half-written record is never read.
            temp_name: format!(".{id}{RECORD_SUFFIX}.new"),
            removed: false,
        };
        registration.write(record)?;
        Ok(registration)
    }

    /// The record file.
    pub fn path(&self) -> PathBuf {
        self.dir.path.join(&self.file_name)
    }

    /// Replaces the record (the live servers changed), atomically: readers see the old record
    /// or the new one, never part of one.
    pub fn update(&self, record: &LiveSetRecord) -> Result<(), LiveSetsError> {
        self.write(record)
    }

    fn write(&self, record: &LiveSetRecord) -> Result<(), LiveSetsError> {
        let bytes = record.to_json().map_err(LiveSetsError::Encode)?;
        let temp_path = self.dir.path.join(&self.temp_name);
        let io = |action, path: &Path, source| LiveSetsError::Io {
            action,
            path: path.to_owned(),
            source,
        };
        match fs::unlink_at(&self.dir.fd, self.temp_name.as_str()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(errno) => {
                return Err(io(
                    "remove the stale temporary record",
                    &temp_path,
                    errno.into(),
                ))
            }
        }
        let fd = create_private_file(&self.dir.fd, &self.temp_name, &temp_path)
            .map_err(LiveSetsError::Directory)?;
        fs::write_all(&fd, &bytes).map_err(|source| io("write", &temp_path, source))?;
        drop(fd);
        fs::rename_at(&self.dir.fd, &self.temp_name, &self.file_name)
            .map_err(|errno| io("rename into place", &self.path(), errno.into()))
    }

    /// Removes the record.
    pub fn remove(mut self) -> Result<(), LiveSetsError> {
        self.remove_inner()
    }

    fn remove_inner(&mut self) -> Result<(), LiveSetsError> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        let _ = fs::unlink_at(&self.dir.fd, self.temp_name.as_str());
        match fs::unlink_at(&self.dir.fd, self.file_name.as_str()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(errno) => Err(LiveSetsError::Io {
                action: "remove",
                path: self.path(),
                source: errno.into(),
            }),
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Err(error) = self.remove_inner() {
            tracing::warn!(%error, "could not remove this server set's registry record");
        }
    }
}
