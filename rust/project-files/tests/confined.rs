//! Confined access: nothing outside the root is ever read, whatever is swapped in, and
//! nothing blocks on a FIFO. Each test runs with the kernel's `openat2` (on Linux) and with
//! the portable `openat(O_NOFOLLOW)` walk the other Unixes use.
#![cfg(unix)] // elsewhere confined access is `Unsupported` so far

mod support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use ide_mcp_project_files::{Credentials, EntryKind, Error, ProjectFiles, ReadLimits};

fn both_resolvers(root: &Path) -> [(&'static str, ProjectFiles); 2] {
    [
        ("native", ProjectFiles::open(root).expect("open")),
        (
            "walk",
            ProjectFiles::open_with_portable_walk(root).expect("open"),
        ),
    ]
}

fn read(files: &ProjectFiles, path: &str) -> Result<String, Error> {
    files
        .read_lines(
            path,
            None,
            None,
            ReadLimits::default(),
            Credentials::Withhold,
        )
        .map(|lines| lines.content)
}

struct Tree {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("project");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(root.join("d")).expect("mkdir");
    std::fs::create_dir_all(root.join("docs/real")).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(root.join("d/x.txt"), "inside\n").expect("write");
    std::fs::write(root.join("docs/real/guide.md"), "guide\n").expect("write");
    std::fs::write(outside.join("x.txt"), "OUTSIDE\n").expect("write");
    Tree {
        _dir: dir,
        root,
        outside,
    }
}

#[test]
fn a_directory_swapped_with_a_link_out_never_yields_the_outside_file() {
    let tree = tree();
    // `d` and `e` trade places atomically, over and over: `e` is a link to the outside.
    symlink(&tree.outside, tree.root.join("e")).expect("symlink");
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (root, stop) = (tree.root.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let dir = std::fs::File::open(&root).expect("open root");
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(&dir, "d", &dir, "e", rustix::fs::RenameFlags::EXCHANGE)
                    .expect("exchange");
                swaps += 1;
            }
            swaps
        })
    };
    let mut escaped = 0;
    let mut inside = 0;
    for (name, files) in both_resolvers(&tree.root) {
        for _ in 0..3000 {
            match read(&files, "d/x.txt") {
                Ok(text) if text == "OUTSIDE\n" => escaped += 1,
                Ok(_) => inside += 1,
                Err(Error::Escapes(_) | Error::NotFound(_)) => {}
                Err(other) => panic!("{name}: unexpected {other:?}"),
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().expect("swapper");
    assert_eq!(escaped, 0, "reads of d/x.txt returned the outside file");
    assert!(inside > 0 && swaps > 0, "inside {inside}, swaps {swaps}");
}

#[test]
fn a_fifo_in_place_of_a_file_is_refused_without_blocking() {
    let tree = tree();
    let fifo = tree.root.join("d/x.txt");
    std::fs::remove_file(&fifo).expect("rm");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let (done, outcome) = mpsc::channel();
    let root = tree.root.clone();
    std::thread::spawn(move || {
        let results: Vec<_> = both_resolvers(&root)
            .iter()
            .map(|(_, files)| read(files, "d/x.txt").map_err(|error| error.to_string()))
            .collect();
        let _ = done.send(results);
    });
    // A liveness bound, not a timing: opening a FIFO for reading blocks for good without
    // O_NONBLOCK, since nobody ever opens it for writing.
    let results = outcome
        .recv_timeout(Duration::from_secs(60))
        .expect("the read blocked on the FIFO");
    for result in results {
        let error = result.expect_err("a FIFO must be refused");
        assert!(
            error.contains("not a regular file (it is a FIFO)"),
            "{error}"
        );
    }
}

#[test]
fn links_inside_are_followed_and_links_out_are_refused() {
    let tree = tree();
    symlink("real", tree.root.join("docs/current")).expect("symlink");
    symlink("../d/x.txt", tree.root.join("docs/x-link")).expect("symlink");
    symlink("../../outside/x.txt", tree.root.join("docs/out-relative")).expect("symlink");
    symlink(tree.outside.join("x.txt"), tree.root.join("out-absolute")).expect("symlink");
    symlink("/proc/self/root/etc/hostname", tree.root.join("magic")).expect("symlink");
    symlink("loop-b", tree.root.join("loop-a")).expect("symlink");
    symlink("loop-a", tree.root.join("loop-b")).expect("symlink");
    for (name, files) in both_resolvers(&tree.root) {
        assert_eq!(
            read(&files, "docs/current/guide.md").expect(name),
            "guide\n"
        );
        assert_eq!(read(&files, "docs/x-link").expect(name), "inside\n");
        for out in ["docs/out-relative", "out-absolute", "magic", "loop-a"] {
            assert!(
                matches!(read(&files, out), Err(Error::Escapes(_))),
                "{name}: {out}: {:?}",
                read(&files, out)
            );
        }
        for bad in ["../outside/x.txt", "/etc/hostname", "d/../../outside/x.txt"] {
            assert!(
                matches!(read(&files, bad), Err(Error::InvalidPath { .. })),
                "{name}: {bad}"
            );
        }
        assert!(
            matches!(read(&files, "d"), Err(Error::IsDirectory(_))),
            "{name}"
        );
        assert!(
            matches!(read(&files, "missing.txt"), Err(Error::NotFound(_))),
            "{name}"
        );
        assert!(
            matches!(read(&files, "d/x.txt/y"), Err(Error::NotFound(_))),
            "{name}"
        );
    }
}

#[test]
fn list_and_stat_show_links_as_links_and_stay_beneath_the_root() {
    let tree = tree();
    symlink(&tree.outside, tree.root.join("out")).expect("symlink");
    for (name, files) in both_resolvers(&tree.root) {
        let (entries, total) = files.list_directory("", 10).expect(name);
        let kinds: Vec<(&str, EntryKind)> =
            entries.iter().map(|e| (e.name.as_str(), e.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("d", EntryKind::Directory),
                ("docs", EntryKind::Directory),
                ("out", EntryKind::Symlink)
            ]
        );
        assert_eq!(total, 3);
        assert!(
            matches!(files.list_directory("out", 10), Err(Error::Escapes(_))),
            "{name}"
        );
        assert!(
            matches!(
                files.list_directory("d/x.txt", 10),
                Err(Error::NotDirectory(_))
            ),
            "{name}"
        );
        let stat = files.stat("d/x.txt").expect(name);
        assert_eq!((stat.kind, stat.size), (EntryKind::File, Some(7)));
        assert_eq!(files.stat("out").expect(name).kind, EntryKind::Symlink);
        assert!(
            matches!(files.stat("out/x.txt"), Err(Error::Escapes(_))),
            "{name}"
        );
        assert_eq!(files.stat("").expect(name).kind, EntryKind::Directory);
    }
}

#[test]
fn ranges_binary_and_size_limits() {
    let tree = tree();
    std::fs::write(tree.root.join("lines.txt"), "one\r\ntwo\nthree\n").expect("write");
    std::fs::write(tree.root.join("blob.bin"), b"abc\0def").expect("write");
    std::fs::write(tree.root.join("latin1.txt"), b"caf\xe9\n").expect("write");
    let files = ProjectFiles::open(&tree.root).expect("open");
    let lines = files
        .read_lines(
            "lines.txt",
            Some(2),
            None,
            ReadLimits::default(),
            Credentials::Withhold,
        )
        .expect("read");
    assert_eq!(
        (lines.content.as_str(), lines.total_lines, lines.end_line),
        ("two\nthree\n", 3, 3)
    );
    let whole = read(&files, "lines.txt").expect("read");
    assert_eq!(whole, "one\ntwo\nthree\n");
    assert!(matches!(
        files.read_lines(
            "lines.txt",
            Some(9),
            None,
            ReadLimits::default(),
            Credentials::Withhold
        ),
        Err(Error::BadRange(_))
    ));
    assert!(matches!(
        files.read_lines(
            "lines.txt",
            Some(3),
            Some(2),
            ReadLimits::default(),
            Credentials::Withhold
        ),
        Err(Error::BadRange(_))
    ));
    assert!(matches!(
        read(&files, "blob.bin"),
        Err(Error::Binary { .. })
    ));
    assert!(matches!(read(&files, "latin1.txt"), Err(Error::NotUtf8(_))));
    let small = ReadLimits {
        max_whole_bytes: 4,
        max_content_bytes: 8,
        ..ReadLimits::default()
    };
    assert!(matches!(
        files.read_lines("lines.txt", None, None, small, Credentials::Withhold),
        Err(Error::TooLarge { .. })
    ));
    let cut = files
        .read_lines("lines.txt", Some(1), None, small, Credentials::Withhold)
        .expect("ranged");
    assert_eq!(
        (cut.content.as_str(), cut.end_line, cut.truncated),
        ("one\ntwo\n", 2, true)
    );
}
