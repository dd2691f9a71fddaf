//! Helpers shared by the XML tests.

use serde_json::Value;
use toolstream::{Config, Parsed, RepairKind, Tools};

/// The arguments of call `i`, parsed.
pub(crate) fn args(p: &Parsed, i: usize) -> Value {
    serde_json::from_str(&p.calls[i].arguments).unwrap()
}

/// The repair kinds of call `i`.
pub(crate) fn kinds(p: &Parsed, i: usize) -> Vec<RepairKind> {
    p.calls[i].repairs.iter().map(|r| r.kind).collect()
}

/// Auto mode.
pub(crate) fn auto() -> Config {
    Config::default()
}

/// Auto mode with tools.
pub(crate) fn with_tools(json: &str) -> Config {
    Config::default().with_tools(Tools::from_json(json).unwrap())
}

/// `get_weather(location: string, days: integer)` and `set_flag(on: boolean, tags: array)`.
pub(crate) fn weather_tools() -> Config {
    with_tools(
        r#"[
        {"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{
            "location":{"type":"string"},"city":{"type":"string"},"days":{"type":"integer"},"unit":{"type":"string"}}}}},
        {"type":"function","function":{"name":"set_flag","parameters":{"type":"object","properties":{
            "on":{"type":"boolean"},"tags":{"type":"array"},"ratio":{"type":"number"},"code":{"type":"string"}}}}},
        {"type":"function","function":{"name":"write_file","parameters":{"type":"object","properties":{
            "path":{"type":"string"},"content":{"type":"string"}}}}}
    ]"#,
    )
}

/// The deltas of call `index`, in order.
pub(crate) fn deltas(p: &Parsed, index: usize) -> Vec<String> {
    p.events
        .iter()
        .filter_map(|e| match e {
            toolstream::Event::ToolArgs {
                index: i, delta, ..
            } if *i == index => Some(String::from_utf8_lossy(delta).into_owned()),
            _ => None,
        })
        .collect()
}

/// Diagnostics' kinds.
pub(crate) fn diagnostics(p: &Parsed) -> Vec<toolstream::DiagnosticKind> {
    p.events
        .iter()
        .filter_map(|e| match e {
            toolstream::Event::Diagnostic { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect()
}
