//! Search: linear-time whatever the pattern, gitignore-aware, bounded, and stopped by its
//! deadline or its cancel flag.
#![cfg(unix)] // elsewhere confined access is `Unsupported` so far

mod support;

use std::time::{Duration, Instant};

use ide_mcp_project_files::search::{
    find_files, search_text, CancelFlag, FindRequest, SearchRequest, Stop,
};
use ide_mcp_project_files::{Credentials, Error};
use support::Project;

fn project() -> Project {
    Project {
        dir: tempfile::tempdir().expect("tempdir"),
    }
}

fn request(pattern: &str) -> SearchRequest<'_> {
    SearchRequest {
        pattern,
        ignore_case: false,
        glob: None,
        path: "",
        max_matches: 100,
        max_file_bytes: 8 * 1024 * 1024,
        credentials: Credentials::Withhold,
        threads: 2,
    }
}

#[test]
fn the_catastrophic_pattern_completes_on_four_threads_at_once() {
    let project = project();
    // 40 `a`s and a `b`: a backtracking engine tries about 2^40 ways before failing.
    project.write(
        "bad.txt",
        &format!("{}b\n{}\n", "a".repeat(40), "a".repeat(41)),
    );
    let files = project.files();
    std::thread::scope(|scope| {
        let searches: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| search_text(&files, &request("(.*a){25}$"), &Stop::default())))
            .collect();
        for search in searches {
            let outcome = search.join().expect("thread").expect("search");
            assert_eq!(outcome.matches.len(), 1, "{outcome:?}");
            assert_eq!(outcome.matches[0].line, 2);
        }
    });
}

#[test]
fn gitignored_files_binary_files_and_links_are_not_searched() {
    let project = project();
    std::fs::create_dir_all(project.root().join(".git")).expect("git dir");
    project.write(".gitignore", "target/\n*.log\n");
    project.write("src/lib.rs", "needle\n");
    project.write("target/out.rs", "needle\n");
    project.write("debug.log", "needle\n");
    project.write("blob.bin", "needle\0\n");
    project.write(".hidden/conf.toml", "needle = 1\n");
    std::os::unix::fs::symlink(
        project.root().join("src/lib.rs"),
        project.root().join("link.rs"),
    )
    .expect("symlink");
    let files = project.files();
    let outcome = search_text(&files, &request("needle"), &Stop::default()).expect("search");
    let paths: Vec<&str> = outcome.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, [".hidden/conf.toml", "src/lib.rs"]);
    assert_eq!(outcome.files_skipped, 1, "the binary file");
    let ignoring_case = SearchRequest {
        ignore_case: true,
        glob: Some("*.rs"),
        ..request("NEEDLE")
    };
    let outcome = search_text(&files, &ignoring_case, &Stop::default()).expect("search");
    assert_eq!(outcome.matches.len(), 1);
    let under = SearchRequest {
        path: "src",
        ..request("needle")
    };
    assert_eq!(
        search_text(&files, &under, &Stop::default())
            .expect("search")
            .matches
            .len(),
        1
    );
}

#[test]
fn output_is_bounded_and_says_so() {
    let project = project();
    for file in 0..20 {
        project.write(&format!("f{file}.txt"), &"hit\n".repeat(50));
    }
    project.write(
        "long.txt",
        &format!("{}hit{}\n", "x".repeat(5000), "y".repeat(5000)),
    );
    let files = project.files();
    let outcome = search_text(&files, &request("hit"), &Stop::default()).expect("search");
    assert_eq!(outcome.matches.len(), 100);
    assert!(outcome.truncated);
    let long = search_text(
        &files,
        &SearchRequest {
            glob: Some("long.txt"),
            ..request("hit")
        },
        &Stop::default(),
    )
    .expect("search");
    let text = &long.matches[0].text;
    assert!(
        text.contains("hit") && text.chars().count() <= 302,
        "{}",
        text.len()
    );
}

#[test]
fn a_raised_cancel_flag_stops_the_search_and_a_past_deadline_answers_with_what_it_has() {
    let project = project();
    for file in 0..50 {
        project.write(&format!("f{file}.txt"), "hit\n");
    }
    let files = project.files();
    let cancel = CancelFlag::new();
    cancel.cancel();
    let cancelled = Stop {
        cancel,
        deadline: None,
    };
    assert!(matches!(
        search_text(&files, &request("hit"), &cancelled),
        Err(Error::Cancelled)
    ));
    let find = FindRequest {
        glob: "*.txt",
        path: "",
        max_results: 10,
        credentials: Credentials::Withhold,
        threads: 2,
    };
    assert!(matches!(
        find_files(&files, &find, &cancelled),
        Err(Error::Cancelled)
    ));
    let late = Stop {
        cancel: CancelFlag::new(),
        deadline: Some(Instant::now() - Duration::from_secs(1)),
    };
    let outcome = search_text(&files, &request("hit"), &late).expect("search");
    assert!(outcome.timed_out && outcome.matches.is_empty());
}

#[test]
fn cancelling_from_another_thread_stops_a_search_inside_a_large_file() {
    let project = project();
    // One large file: the stop is checked for every buffer read inside it.
    let line = "a".repeat(200) + "\n";
    project.write("huge.txt", &line.repeat(7 * 1024 * 1024 / line.len()));
    let files = project.files();
    let cancel = CancelFlag::new();
    let stop = Stop {
        cancel: cancel.clone(),
        deadline: None,
    };
    let outcome = std::thread::scope(|scope| {
        let search = scope.spawn(|| search_text(&files, &request("(a|aa)*b"), &stop));
        cancel.cancel();
        search.join().expect("thread")
    });
    // Cancelled before or while it read the file; either way no answer but `Cancelled`.
    assert!(matches!(outcome, Err(Error::Cancelled)), "{outcome:?}");
}

#[test]
fn bad_patterns_and_globs_are_clear_errors() {
    let project = project();
    project.write("a.txt", "x\n");
    let files = project.files();
    let error = search_text(&files, &request("(unclosed"), &Stop::default()).expect_err("bad");
    assert!(error.to_string().contains("Rust regex syntax"), "{error}");
    let backreference = search_text(&files, &request(r"(a)\1"), &Stop::default()).expect_err("bad");
    assert!(matches!(backreference, Error::BadPattern(_)));
    let glob = SearchRequest {
        glob: Some("a["),
        ..request("x")
    };
    assert!(matches!(
        search_text(&files, &glob, &Stop::default()),
        Err(Error::BadGlob(_))
    ));
}
