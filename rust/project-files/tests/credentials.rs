//! The credential rule on every tool: planted secrets never come out of search, find or read,
//! unless the call was explicitly allowed.
#![cfg(unix)] // elsewhere confined access is `Unsupported` so far

mod support;

use ide_mcp_project_files::search::{find_files, search_text, FindRequest, SearchRequest, Stop};
use ide_mcp_project_files::{Credentials, Error, ReadLimits};
use support::{planted_project, PLANTED, SECRET_PATTERN};

fn search(credentials: Credentials) -> SearchRequest<'static> {
    SearchRequest {
        pattern: SECRET_PATTERN,
        ignore_case: false,
        glob: None,
        path: "",
        max_matches: 1000,
        max_file_bytes: 8 * 1024 * 1024,
        credentials,
        threads: 2,
    }
}

#[test]
fn search_returns_no_line_of_a_planted_secret_and_counts_the_files_withheld() {
    let project = planted_project();
    let files = project.files();
    let outcome =
        search_text(&files, &search(Credentials::Withhold), &Stop::default()).expect("search");
    let paths: Vec<&str> = outcome.matches.iter().map(|m| m.path.as_str()).collect();
    for (planted, _) in PLANTED {
        assert!(
            !paths.contains(&planted),
            "{planted} leaked: {:?}",
            outcome.matches
        );
    }
    for found in &outcome.matches {
        assert!(
            !found.text.contains("ghp_") && !found.text.contains("hunter2"),
            "{found:?}"
        );
    }
    assert!(
        paths.contains(&"src/auth.rs") && paths.contains(&"README.md"),
        "{paths:?}"
    );
    // .env and .aws/credentials by name, deploy/id_rsa_prod and secrets.yaml by content;
    // .git is never searched.
    assert_eq!(outcome.files_withheld, 4, "{outcome:?}");
}

#[test]
fn an_explicitly_allowed_search_sees_them() {
    let project = planted_project();
    let files = project.files();
    let outcome = search_text(
        &files,
        &search(Credentials::ExplicitlyAllowed),
        &Stop::default(),
    )
    .expect("search");
    let paths: Vec<&str> = outcome.matches.iter().map(|m| m.path.as_str()).collect();
    for planted in [
        ".env",
        ".aws/credentials",
        "deploy/id_rsa_prod",
        "secrets.yaml",
    ] {
        assert!(paths.contains(&planted), "{planted} missing: {paths:?}");
    }
    assert_eq!(outcome.files_withheld, 0);
}

#[test]
fn read_refuses_every_planted_secret_by_name_or_content() {
    let project = planted_project();
    let files = project.files();
    for (planted, content) in PLANTED {
        match files.read_lines(
            planted,
            None,
            None,
            ReadLimits::default(),
            Credentials::Withhold,
        ) {
            Err(Error::Credential { path, why }) => {
                assert_eq!(path, planted);
                assert!(
                    !why.contains("ghp_"),
                    "the reason must not quote the secret: {why}"
                );
            }
            other => panic!("{planted}: {other:?}"),
        }
        let allowed = files
            .read_lines(
                planted,
                None,
                None,
                ReadLimits::default(),
                Credentials::ExplicitlyAllowed,
            )
            .expect("explicitly allowed");
        assert_eq!(allowed.content, content);
    }
    let ordinary = files
        .read_lines(
            "src/auth.rs",
            Some(2),
            Some(2),
            ReadLimits::default(),
            Credentials::Withhold,
        )
        .expect("ordinary file");
    assert_eq!(ordinary.content, "pub fn check(password: &str) -> bool {\n");
    assert_eq!(
        (ordinary.total_lines, ordinary.start_line, ordinary.end_line),
        (4, 2, 2)
    );
}

#[test]
fn a_secret_far_down_a_large_file_still_withholds_it_from_search() {
    let project = planted_project();
    let mut big = String::from("password = read_from_vault()\n");
    while big.len() < 3 * 1024 * 1024 {
        big.push_str("filler line without anything of interest in it at all\n");
    }
    big.push_str("-----BEGIN RSA PRIVATE KEY-----\n");
    project.write("data/dump.txt", &big);
    let files = project.files();
    let outcome =
        search_text(&files, &search(Credentials::Withhold), &Stop::default()).expect("search");
    assert!(
        outcome.matches.iter().all(|m| m.path != "data/dump.txt"),
        "{outcome:?}"
    );
    assert_eq!(outcome.files_withheld, 5);
}

#[test]
fn find_files_counts_what_read_would_refuse_instead_of_listing_it() {
    let project = planted_project();
    let files = project.files();
    let request = FindRequest {
        glob: "*",
        path: "",
        max_results: 100,
        credentials: Credentials::Withhold,
        threads: 2,
    };
    let outcome = find_files(&files, &request, &Stop::default()).expect("find");
    assert_eq!(outcome.files, ["README.md", "src/auth.rs"]);
    assert_eq!(outcome.files_withheld, 4);
    let allowed = find_files(
        &files,
        &FindRequest {
            credentials: Credentials::ExplicitlyAllowed,
            ..request
        },
        &Stop::default(),
    )
    .expect("find");
    assert_eq!(allowed.files.len(), 6, "{allowed:?}");
}

#[test]
fn list_directory_still_shows_the_names() {
    let project = planted_project();
    let (entries, total) = project.files().list_directory("", 100).expect("list");
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            ".aws",
            ".env",
            ".git",
            "README.md",
            "deploy",
            "secrets.yaml",
            "src"
        ]
    );
    assert_eq!(total, 7);
}
