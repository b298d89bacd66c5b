//! Runs the search benchmark on a small tree and checks it is well-formed: the native search
//! finds exactly the lines a plain scan of the generated files finds, and the section renders
//! with its goals. No figure is asserted: they belong in the real run.
#![allow(clippy::unwrap_used)]

use ide_mcp_bench::search::{generate_tree, run, SearchPlan, PATTERNS};

#[test]
fn a_small_tree_is_searched_and_the_section_renders() {
    let plan = SearchPlan {
        files: 60,
        runs: 1,
        java: Err("left out of the smoke run".to_owned()),
        rg: "rg".into(),
    };
    let report = run(&plan).unwrap();
    assert_eq!(report.rows.len(), PATTERNS.len());

    let directory = tempfile::tempdir().unwrap();
    generate_tree(directory.path(), plan.files).unwrap();
    let mut todo_lines = 0;
    let mut stack = vec![directory.path().to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(
                std::fs::read_dir(&path)
                    .unwrap()
                    .map(|entry| entry.unwrap().path()),
            );
        } else {
            let text = std::fs::read_to_string(&path).unwrap();
            todo_lines += text.lines().filter(|line| line.contains("TODO")).count();
        }
    }
    let literal = &report.rows[0];
    assert_eq!(literal.pattern, "TODO");
    let ours = literal.ours.as_ref().unwrap();
    assert!(todo_lines > 0);
    assert_eq!(ours.matches, todo_lines);
    if let Ok(rg) = &literal.rg {
        assert_eq!(rg.matches, todo_lines);
    }
    let section = report.to_markdown();
    assert!(section.starts_with("## `search_text`"));
    assert!(section.contains("within 1.5× of `rg`"));
    assert!(section.contains("not measured: left out of the smoke run"));
}
