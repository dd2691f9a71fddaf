//! Scratch.
mod common;
use common::check_all;
use toolstream::{Config, Event};

fn show(input: &str) {
    let p = check_all(input.as_bytes(), &Config::default());
    eprintln!("{input:?}\n  text={:?} think={:?}", p.text, p.thinking);
    for c in &p.calls {
        eprintln!(
            "  {} id={} {} {:?} trunc={}",
            c.name,
            c.id,
            c.arguments,
            c.repairs
                .iter()
                .map(|r| r.kind.as_str())
                .collect::<Vec<_>>(),
            c.truncated
        );
    }
    let m: Vec<_> = p
        .events
        .iter()
        .filter(|e| matches!(e, Event::Markup { .. }))
        .map(|e| {
            let s = e.span();
            &input[s.start as usize..s.end as usize]
        })
        .collect();
    if !m.is_empty() {
        eprintln!("  markup={m:?}");
    }
}

#[test]
fn scratch() {
    for input in std::fs::read_to_string("/tmp/scratch/cases.txt")
        .unwrap()
        .split("\n====\n")
    {
        show(input.trim_end_matches('\n'));
    }
}
