//! Credentials recognised by content, in linear time (Rust `regex`, no backtracking): one
//! scan for private keys and token formats, whose fixed prefixes (`-----BEGIN`, `ghp_`,
//! `AKIA`, …) let the regex engine skip ahead with a literal search, and one literal search for
//! `://`, around each of which (rare in most files) a small window is matched against the
//! pattern of a URL with a password. Word boundaries are ASCII-only, so the scans stay on the
//! fast engines on any bytes.

use std::sync::OnceLock;

use regex::bytes::Regex;

/// One credential found in a file's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentFinding {
    /// What it is, e.g. "a private key (PEM or OpenSSH)".
    pub kind: &'static str,
    /// The line it starts on (1-based).
    pub line: usize,
}

/// Each format, with the words for it.
const FORMATS: &[(&str, &str)] = &[
    (
        "a private key (PEM or OpenSSH)",
        r"-----BEGIN[ A-Z0-9]{0,40} PRIVATE KEY(?: BLOCK)?-----",
    ),
    ("a PuTTY private key", r"PuTTY-User-Key-File-[0-9]"),
    (
        "a GitHub token",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{30,255})",
    ),
    ("a GitLab token", r"(?-u:\b)glpat-[A-Za-z0-9_\-]{20,}"),
    (
        "an AWS access key id",
        r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}(?-u:\b)",
    ),
    (
        "an AWS secret access key",
        r#"(?i:aws_?secret_?access_?key|aws_?secret)["']?\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}"#,
    ),
    (
        "a Slack token",
        r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}|hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
    ),
    (
        "an OpenAI or Anthropic API key",
        r"(?-u:\b)sk-(?:proj-|svcacct-|admin-|ant-[a-z0-9]{2,10}-)?[A-Za-z0-9_\-]{20,}",
    ),
    ("a Google API key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}"),
    (
        "a Stripe secret key",
        r"(?-u:\b)[rs]k_live_[0-9A-Za-z]{20,}",
    ),
    ("an npm token", r"(?-u:\b)npm_[A-Za-z0-9]{36}"),
    ("a PyPI token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
];

/// A URL whose authority carries a password: `scheme://user:password@host`.
const URL_WITH_PASSWORD: &str = r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s/?#@:'"<>]{1,256}:[^\s/?#@'"<>]{1,256}@[A-Za-z0-9\[]"#;
/// How far a URL's scheme may start before its `://`, and its authority run after it.
const SCHEME_REACH: usize = 32;
const AUTHORITY_REACH: usize = 2 * 256 + 8;
const URL_KIND: &str = "a URL with a password in it";

struct Detectors {
    /// Every format in one alternation, for one pass.
    any_format: Regex,
    /// Each format alone, to name what the pass found.
    formats: Vec<(&'static str, Regex)>,
    url: Regex,
}

fn detectors() -> &'static Detectors {
    static DETECTORS: OnceLock<Detectors> = OnceLock::new();
    DETECTORS.get_or_init(|| {
        let compile = |pattern: &str| {
            // The patterns are constants of this file; a unit test compiles every one.
            Regex::new(pattern).unwrap_or_else(|error| panic!("credential pattern: {error}"))
        };
        let alternation = FORMATS
            .iter()
            .map(|(_, pattern)| format!("(?:{pattern})"))
            .collect::<Vec<_>>()
            .join("|");
        Detectors {
            any_format: compile(&alternation),
            formats: FORMATS
                .iter()
                .map(|(kind, pattern)| (*kind, compile(pattern)))
                .collect(),
            url: compile(URL_WITH_PASSWORD),
        }
    })
}

/// The first credential in `content`, if any.
pub fn find_in_content(content: &[u8]) -> Option<ContentFinding> {
    let detectors = detectors();
    let format = detectors.any_format.find(content).map(|found| {
        let text = found.as_bytes();
        let kind = detectors
            .formats
            .iter()
            .find(|(_, regex)| regex.is_match(text))
            .map_or("a credential", |(kind, _)| *kind);
        (found.start(), kind)
    });
    let url = find_url_with_password(&detectors.url, content).map(|start| (start, URL_KIND));
    let (start, kind) = match (format, url) {
        (Some(a), Some(b)) => a.min(b),
        (one, other) => one.or(other)?,
    };
    let line = 1 + content[..start]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count();
    Some(ContentFinding { kind, line })
}

/// Where the first URL with a password starts: the pattern is tried only in a window around
/// each `://`, found with a SIMD literal search.
fn find_url_with_password(url: &Regex, content: &[u8]) -> Option<usize> {
    memchr::memmem::find_iter(content, b"://").find_map(|at| {
        let from = at.saturating_sub(SCHEME_REACH);
        let to = (at + 3 + AUTHORITY_REACH).min(content.len());
        url.find(&content[from..to])
            .filter(|found| from + found.start() <= at)
            .map(|found| from + found.start())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<&'static str> {
        find_in_content(text.as_bytes()).map(|finding| finding.kind)
    }

    #[test]
    fn every_pattern_compiles() {
        let detectors = detectors();
        assert_eq!(detectors.formats.len(), FORMATS.len());
    }

    #[test]
    fn keys_tokens_and_urls_with_passwords_are_found() {
        let cases = [
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n",
                "a private key (PEM or OpenSSH)",
            ),
            (
                "x\n-----BEGIN RSA PRIVATE KEY-----\n",
                "a private key (PEM or OpenSSH)",
            ),
            (
                "-----BEGIN PRIVATE KEY-----",
                "a private key (PEM or OpenSSH)",
            ),
            (
                "-----BEGIN ENCRYPTED PRIVATE KEY-----",
                "a private key (PEM or OpenSSH)",
            ),
            (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----",
                "a private key (PEM or OpenSSH)",
            ),
            (
                "token: ghp_0123456789abcdefghijABCDEFGHIJ012345",
                "a GitHub token",
            ),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
                "a GitHub token",
            ),
            ("id = AKIAIOSFODNN7EXAMPLE", "an AWS access key id"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "an AWS secret access key",
            ),
            ("SLACK=xoxb-123456789012-abcdefghij", "a Slack token"),
            (
                "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx",
                "an OpenAI or Anthropic API key",
            ),
            (
                "key=AIzaSyA0123456789abcdefghijklmnopqrstuv",
                "a Google API key",
            ),
            (
                "url = https://user:ghp_secret@github.com/o/r",
                "a URL with a password in it",
            ),
            (
                "postgres://app:hunter2@db.internal:5432/app",
                "a URL with a password in it",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(kind(text), Some(expected), "{text}");
        }
        assert_eq!(
            find_in_content(b"a\nb\n-----BEGIN EC PRIVATE KEY-----").map(|f| f.line),
            Some(3)
        );
    }

    #[test]
    fn ordinary_text_is_not_a_credential() {
        for text in [
            "fn main() { println!(\"https://example.com/path\"); }",
            "see https://user@example.com and ssh://git@github.com:org/repo.git",
            "-----BEGIN PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----",
            "let token = read_token(); // password: see the vault",
            "sk-learn is not a key; AKIA alone is not either",
            "\u{0}\u{1}binary\u{ff}",
        ] {
            assert_eq!(kind(text), None, "{text}");
        }
    }
}
