//! The protocol versions of both eras.

/// The legacy protocol versions, newest first.
pub const LEGACY_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The modern (stateless) protocol versions.
pub const MODERN_PROTOCOL_VERSIONS: [&str; 1] = ["2026-07-28"];

/// Whether `version` is one this server speaks, in either era.
pub fn is_supported_version(version: &str) -> bool {
    MODERN_PROTOCOL_VERSIONS.contains(&version) || LEGACY_PROTOCOL_VERSIONS.contains(&version)
}

/// Every supported version, modern first.
pub fn supported_versions() -> Vec<&'static str> {
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .chain(LEGACY_PROTOCOL_VERSIONS.iter())
        .copied()
        .collect()
}

/// The version `initialize` answers: the client's when it is a legacy version we speak,
/// else our newest legacy version (the client then decides whether to go on).
pub fn negotiated_legacy_version(requested: Option<&str>) -> &'static str {
    LEGACY_PROTOCOL_VERSIONS
        .iter()
        .find(|version| Some(**version) == requested)
        .copied()
        .unwrap_or(LEGACY_PROTOCOL_VERSIONS[0])
}

/// Which era a request belongs to, and so which fields its result carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: results carry only that era's fields. Strict clients (the
    /// TypeScript SDK 1.x) reject a result with a field they do not know.
    Legacy,
    /// 2026-07-28: every result has `resultType`; lists and discovery say how long they keep.
    Modern,
}
