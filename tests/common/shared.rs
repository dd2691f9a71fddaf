//! The one lookup of the reference data kept beside the repository
//! (`../shared/`: recorded provider streams, the public corpus, json_repair's
//! cases, the BFCL checker). A plain clone has no `../shared/`: every test
//! that reads it asks here first, and when the data is absent the test says
//! so on stderr (written past libtest's capture, so `cargo test` shows it)
//! and passes without checking anything. `tests/zz_shared_summary.rs` (the
//! last test target cargo runs) prints one line counting the skips.
//!
//! CI has `../shared/` and sets `TOOLSTREAM_REQUIRE_SHARED=1`: there an
//! absent path fails the test instead. `TOOLSTREAM_SHARED` points the lookup
//! at another folder (e.g. a missing one, to see the skips).
#![allow(dead_code, unreachable_pub)]

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// The reference data folder: `$TOOLSTREAM_SHARED`, else `../shared`
/// beside the crate.
pub(crate) fn root() -> PathBuf {
    match std::env::var_os("TOOLSTREAM_SHARED") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

/// `../shared/<rel>` when it exists. When it does not: a failure under
/// `TOOLSTREAM_REQUIRE_SHARED=1`, else a skip reported on stderr (once per
/// test) and recorded for the summary, and `None`.
pub(crate) fn path(rel: &str) -> Option<PathBuf> {
    lookup(root().join(rel), rel)
}

/// Like [`path`], but the environment variable `var`, when set, names the
/// folder instead (e.g. `TOOLSTREAM_CAPTURES`); `marker` is a file inside
/// it that must exist (empty: the folder itself).
pub(crate) fn path_or_env(var: &str, rel: &str, marker: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os(var) {
        Some(p) => PathBuf::from(p),
        None => root().join(rel),
    };
    let probe = if marker.is_empty() {
        dir.clone()
    } else {
        dir.join(marker)
    };
    lookup(probe, rel).map(|_| dir)
}

/// Whether skips must be failures (`TOOLSTREAM_REQUIRE_SHARED` set to
/// anything but empty or `0`).
pub(crate) fn required() -> bool {
    std::env::var("TOOLSTREAM_REQUIRE_SHARED").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn lookup(probe: PathBuf, rel: &str) -> Option<PathBuf> {
    let test = test_name();
    if probe.exists() {
        record(&test, None);
        return Some(probe);
    }
    let why = format!("{} is not present", probe.display());
    if required() {
        panic!("{test}: {why}, and TOOLSTREAM_REQUIRE_SHARED is set (check out the reference data as ../shared beside the crate)");
    }
    record(&test, Some(&why));
    static TOLD: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let first = TOLD
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(test.clone());
    if first {
        // `eprintln!` is captured by libtest for passing tests; a write to
        // the stderr handle is not.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: ../shared/{rel} is not present (reference data beside the repository; CI runs this test)"
        );
    }
    None
}

/// `binary::test`, from the executable's name and libtest's thread name.
fn test_name() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    // Cargo names test executables `<target>-<hash>`.
    let bin = exe.rsplit_once('-').map_or(exe.as_str(), |(b, _)| b);
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("main");
    format!("{bin}::{test}")
}

/// The folder of skip records for this checkout: one file per test, saying
/// whether its last run read `../shared` or skipped.
pub(crate) fn ledger() -> PathBuf {
    let manifest: String = env!("CARGO_MANIFEST_DIR")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("shared-skips")
        .join(manifest)
}

fn record(test: &str, skipped: Option<&str>) {
    let dir = ledger();
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let file: String = test
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let line = match skipped {
        Some(why) => format!("skipped\t{test}\t{why}\n"),
        None => format!("ran\t{test}\n"),
    };
    let _ = std::fs::write(dir.join(file), line);
}
