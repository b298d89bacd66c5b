//! Credentials recognised by name: the files and directories that conventionally hold keys,
//! tokens and cloud credentials. The server's baseline policy applies the same rule to path
//! arguments before a call runs (`ide-mcp-server`'s `policy.rs` calls [`kind_by_name`]).

use std::ffi::OsStr;
use std::path::{Component, Path};

const CREDENTIAL_DIRECTORIES: [&str; 7] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".password-store",
    ".docker",
];

const CREDENTIAL_FILES: [&str; 12] = [
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "credentials.json",
    "service-account.json",
];

const CREDENTIAL_EXTENSIONS: [&str; 7] = ["pem", "key", "p12", "pfx", "jks", "keystore", "ppk"];

/// Why `path` (absolute, or relative to a project root) looks like a credential by its name,
/// if it does.
pub fn kind_by_name(path: &Path) -> Option<&'static str> {
    let in_credential_directory = path.components().any(|component| {
        matches!(component, Component::Normal(name) if CREDENTIAL_DIRECTORIES.iter().any(|dir| OsStr::new(dir) == name))
    }) || path
        .to_string_lossy()
        .contains(".config/gcloud");
    if in_credential_directory {
        return Some("inside a directory that holds keys or cloud credentials");
    }
    let name = path.file_name()?.to_string_lossy();
    if name == ".env"
        || (name.starts_with(".env.")
            && !["example", "sample", "template"]
                .iter()
                .any(|suffix| name.ends_with(suffix)))
    {
        return Some("an environment file that usually holds secrets");
    }
    if CREDENTIAL_FILES.iter().any(|file| name == *file) {
        return Some("a well-known credential file");
    }
    let extension = path
        .extension()
        .map(|ext| ext.to_string_lossy().to_lowercase());
    if extension.is_some_and(|ext| CREDENTIAL_EXTENSIONS.contains(&ext.as_str())) {
        return Some("a key or certificate store");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_credential_files_are_recognised_and_others_are_not() {
        for path in [
            ".env",
            ".env.production",
            "keys/server.pem",
            ".ssh/id_ed25519",
            "deploy/.aws/credentials",
            ".npmrc",
            "home/.config/gcloud/adc.json",
        ] {
            assert!(kind_by_name(Path::new(path)).is_some(), "{path}");
        }
        for path in [".env.example", "src/environment.rs", "README.md", "keys.rs"] {
            assert!(kind_by_name(Path::new(path)).is_none(), "{path}");
        }
    }
}
