//! ByteDance Seed-OSS.

use crate::common::check_all;
use crate::util::{args, auto, weather_tools};
use serde_json::json;
use toolstream::{Config, Dialect};

const CATALOGUE: &str = "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>";

#[test]
fn catalogue_example() {
    for cfg in [
        auto(),
        Config::default().with_dialects(vec![Dialect::SeedOss]),
    ] {
        let p = check_all(CATALOGUE.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].name, "get_weather");
        assert_eq!(p.calls[0].arguments, r#"{"location": "Barcelona, Spain"}"#);
        assert!(p.calls[0].repairs.is_empty());
    }
}

#[test]
fn thinking_then_parallel_calls() {
    let input = "<seed:think>Need two cities.</seed:think>Checking.\n<seed:tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</seed:tool_call>\n<seed:tool_call>\n<function=get_weather>\n<parameter=location>\nRome\n</parameter>\n</function>\n</seed:tool_call>";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(p.thinking, "Need two cities.");
    assert_eq!(p.text, "Checking.\n\n");
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p, 0), json!({"location": "Paris", "days": 2}));
    assert_eq!(args(&p, 1), json!({"location": "Rome"}));
}

#[test]
fn calls_inside_seed_think_are_not_extracted() {
    let p = check_all(
        b"<seed:think><seed:tool_call><function=f></function></seed:tool_call></seed:think>ok",
        &auto(),
    );
    assert!(p.calls.is_empty());
    assert_eq!(p.text, "ok");
    let p = check_all(
        b"still thinking</seed:think>\n<seed:tool_call><function=f></function></seed:tool_call>",
        &auto().with_prefill("<seed:think>"),
    );
    assert_eq!(p.thinking, "still thinking");
    assert_eq!(p.calls.len(), 1);
}

#[test]
fn truncated_variants() {
    let p = check_all(
        b"<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barce",
        &auto(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"location": "Barce"}));
    for k in 0..CATALOGUE.len() {
        check_all(&CATALOGUE.as_bytes()[..k], &auto());
    }
}

#[test]
fn delimiters_inside_values() {
    let input = "<seed:tool_call>\n<function=write_file>\n<parameter=content>\nx </parameter> y </function> z </seed:tool_call> w\n</parameter>\n</function>\n</seed:tool_call>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.calls.len(), 1);
    assert_eq!(
        args(&p, 0),
        json!({"content": "x </parameter> y </function> z </seed:tool_call> w"})
    );
    // Each closing tag read as content is recorded (#42 §3).
    assert!(p.calls[0]
        .repairs
        .iter()
        .all(|r| r.kind == toolstream::RepairKind::CloseTagInValue));
    assert_eq!(p.calls[0].repairs.len(), 3);
}
