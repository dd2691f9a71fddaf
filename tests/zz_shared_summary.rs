//! One line counting the tests that skipped because `../shared/` (the
//! reference data beside the repository) is absent, and how many read it.
//! Cargo runs test targets in name order, so this one comes after the
//! others; it reads the records `tests/common/shared.rs` wrote during the
//! run and clears them for the next.

#[path = "common/shared.rs"]
mod shared;

use std::io::Write;

#[test]
fn shared_reference_data_summary() {
    let dir = shared::ledger();
    let mut ran = 0;
    let mut skipped = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            let mut fields = text.trim_end().split('\t');
            match fields.next() {
                Some("ran") => ran += 1,
                Some("skipped") => skipped.push(fields.next().unwrap_or("?").to_owned()),
                _ => {}
            }
            let _ = std::fs::remove_file(e.path());
        }
    }
    // Per test target: how many of its tests skipped.
    let mut by_target: std::collections::BTreeMap<String, usize> = Default::default();
    for t in &skipped {
        let target = t.split("::").next().unwrap_or(t);
        *by_target.entry(target.to_owned()).or_default() += 1;
    }
    let line = if skipped.is_empty() {
        format!("../shared reference data: {ran} tests read it, none skipped")
    } else {
        let targets: Vec<String> = by_target.iter().map(|(t, n)| format!("{t} {n}")).collect();
        format!(
            "../shared reference data: {} tests SKIPPED because it is absent ({ran} read it; by target: {})",
            skipped.len(),
            targets.join(", ")
        )
    };
    // Past libtest's capture, so that `cargo test` shows it.
    let _ = writeln!(std::io::stderr(), "{line}");
    assert!(
        skipped.is_empty() || !shared::required(),
        "TOOLSTREAM_REQUIRE_SHARED is set but tests skipped"
    );
}
