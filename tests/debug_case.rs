//! Replays a failing case by hand: `TS_CASE=file TS_CUTS=3,9 cargo test --test debug_case -- --ignored --nocapture`.

mod common;

#[test]
#[ignore = "manual replay of a saved failing case"]
fn replay() {
    let Ok(path) = std::env::var("TS_CASE") else {
        return;
    };
    let input = std::fs::read(path).unwrap();
    let cuts: Vec<usize> = std::env::var("TS_CUTS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|c| c.trim().parse().ok())
        .collect();
    let mut cfg = toolstream::Config::default();
    if std::env::var("TS_TIGHT").is_ok() {
        cfg = cfg.with_limits(toolstream::Limits {
            max_depth: 3,
            max_args_bytes: 40,
            max_held_bytes: 64,
            max_token_bytes: 16,
            max_tag_bytes: 32,
            max_repairs: 4,
        });
    }
    if let Ok(p) = std::env::var("TS_PREFILL") {
        cfg = cfg.with_prefill(p);
    }
    for (label, cuts) in [
        ("whole", vec![]),
        ("cuts", cuts),
        ("bytes", (1..input.len()).collect()),
    ] {
        println!("== {label}");
        for e in common::run_split(&input, &cuts, &cfg) {
            println!("{e:?}");
        }
    }
}
