//! A project directory with planted secrets beside ordinary source, shared by the tests.

#![allow(dead_code)] // each test file uses part of it

use std::fs;
use std::path::{Path, PathBuf};

use ide_mcp_project_files::ProjectFiles;

/// A GitHub token of the right shape (not a real one).
pub const GITHUB_TOKEN: &str = "ghp_R2d2C3poBb8ObiWanKenobi0123456789ab";

/// The files planted with credentials, by path, each with a line the search pattern
/// `SECRET|PRIVATE|password|token` matches.
pub const PLANTED: [(&str, &str); 5] = [
    (".env", "SECRET_KEY=s3cr3t-value\nDATABASE_password=hunter2\n"),
    (
        ".aws/credentials",
        "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n\
         aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n# token rotated monthly\n",
    ),
    (
        "deploy/id_rsa_prod",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n\
         -----END OPENSSH PRIVATE KEY-----\n",
    ),
    (
        "secrets.yaml",
        "# deploy token for CI\ngithub:\n  token: ghp_R2d2C3poBb8ObiWanKenobi0123456789ab\n",
    ),
    (
        ".git/config",
        "[remote \"origin\"]\n\turl = https://user:ghp_R2d2C3poBb8ObiWanKenobi0123456789ab@github.com/o/r.git\n\
         # token in the url\n",
    ),
];

/// The pattern of the finding.
pub const SECRET_PATTERN: &str = "SECRET|PRIVATE|password|token";

/// A project: planted secrets, and ordinary files the same pattern matches.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn files(&self) -> ProjectFiles {
        ProjectFiles::open(self.root()).expect("open the project")
    }

    pub fn write(&self, relative: &str, content: &str) -> PathBuf {
        let path = self.root().join(relative);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(&path, content).expect("write");
        path
    }
}

/// A project with the planted secrets and `src/auth.rs`, `README.md` matching the pattern.
pub fn planted_project() -> Project {
    let project = Project {
        dir: tempfile::tempdir().expect("tempdir"),
    };
    for (path, content) in PLANTED {
        project.write(path, content);
    }
    project.write(
        "src/auth.rs",
        "/// Checks the password against the stored hash.\npub fn check(password: &str) -> bool {\n    !password.is_empty()\n}\n",
    );
    project.write(
        "README.md",
        "# Demo\nThe API token is read from the environment.\n",
    );
    project
}
