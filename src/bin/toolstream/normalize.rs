//! `toolstream normalize`, and the `--normalize` stage of `parse` and
//! `decode`: tool calls checked and fixed against the offered tools.

// `pub` is this module's interface to `main.rs` and `decode.rs`; in a
// binary crate nothing is reachable from outside.
#![allow(unreachable_pub)]

use std::collections::HashMap;
use std::io::{self, BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use toolstream::normalize::{read_tools, Catalog, Normalizer, Options, Report};
use toolstream::{Event, Tools};

/// Reads a tools file in any supported shape (OpenAI chat / Responses,
/// Anthropic, Gemini, MCP `tools/list`, bare `{name, parameters}`).
pub fn load_tools(path: &Path) -> Result<Tools, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    read_tools(&text)
        .map(|(tools, _)| tools)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The normalizer's switches on the command line.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct SwitchArgs {
    /// Strict mode: resolve and coerce nothing, report every problem.
    #[arg(long)]
    pub strict: bool,
    /// Do not resolve tool names by edit distance.
    #[arg(long)]
    pub no_fuzzy_names: bool,
    /// Do not resolve placeholder tool names (`tool_name`) from the arguments.
    #[arg(long)]
    pub no_placeholder_names: bool,
    /// Keep (and report) parameters the schema forbids instead of dropping them.
    #[arg(long)]
    pub no_drop_unknown: bool,
}

impl SwitchArgs {
    fn options(&self) -> Options {
        let mut o = if self.strict {
            Options::strict()
        } else {
            Options::default()
        };
        if self.no_fuzzy_names {
            o.fuzzy_names = false;
        }
        if self.no_placeholder_names {
            o.placeholder_names = false;
        }
        if self.no_drop_unknown {
            o.drop_unknown = false;
        }
        o
    }
}

/// `--normalize` for `toolstream parse` (which has its own `--tools`).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ParseNormalizeArgs {
    /// Check and fix each call against the `--tools` list while it streams;
    /// each call's repairs and errors are printed with it.
    #[arg(long, requires = "tools")]
    pub normalize: bool,
    #[command(flatten)]
    pub switches: SwitchArgs,
}

/// `--normalize --tools FILE` for `toolstream decode`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct DecodeNormalizeArgs {
    /// Check and fix each call against `--tools` while it streams; each
    /// call's repairs and errors are printed with it (events, calls output).
    #[arg(long, requires = "tools")]
    pub normalize: bool,
    /// The tools the model was offered (any supported shape).
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    #[command(flatten)]
    pub switches: SwitchArgs,
}

/// The streaming normalizer between a parser or decoder and the printer;
/// does nothing when `--normalize` is not given.
#[derive(Debug, Default)]
pub struct Stage {
    norm: Option<Normalizer>,
    /// Each ended call's resolved name and report, by call index.
    reports: HashMap<usize, (String, Report)>,
}

impl Stage {
    /// A stage for `tools` (none: a pass-through stage).
    pub fn new(tools: Option<&Path>, switches: &SwitchArgs) -> Result<Stage, String> {
        let Some(path) = tools else {
            return Ok(Stage::default());
        };
        let catalog = Catalog::with_options(&load_tools(path)?, switches.options());
        for (name, err) in catalog.schema_errors() {
            eprintln!("toolstream: warning: the schema of tool `{name}` does not compile ({err}); its calls are coerced but not validated");
        }
        Ok(Stage {
            norm: Some(Normalizer::new(Arc::new(catalog))),
            reports: HashMap::new(),
        })
    }

    /// Rewrites `events` in place (normalized calls); keeps each call's report.
    pub fn apply(&mut self, events: &mut Vec<Event>) {
        let Some(norm) = &mut self.norm else { return };
        let mut out = Vec::with_capacity(events.len());
        for e in events.drain(..) {
            norm.push_into(e, &mut out);
        }
        for n in out {
            if let (Event::ToolEnd { call, .. }, Some(r)) = (&n.event, n.report) {
                self.reports.insert(call.index, (call.name.to_string(), *r));
            }
            events.push(n.event);
        }
    }

    /// Ends the stream (calls that never ended pass through as they are).
    pub fn finish(&mut self, events: &mut Vec<Event>) {
        if let Some(norm) = &mut self.norm {
            events.extend(norm.finish().into_iter().map(|n| n.event));
        }
    }

    /// The line printed after a `tool_end` event in events output.
    pub fn report_line(&self, e: &Event) -> Option<Value> {
        let Event::ToolEnd { call, .. } = e else {
            return None;
        };
        let (name, r) = self.reports.get(&call.index)?;
        let mut v = report_json(r, name);
        v.insert("type".into(), json!("normalized"));
        v.insert("index".into(), json!(call.index));
        Some(Value::Object(v))
    }

    /// Adds the calls' reports to a `{"text", "thinking", "calls"}` document
    /// as it was written (its arguments exactly as the parser wrote them):
    /// a last member `"normalized": [{"index", "ok", "repairs", "errors", …}]`.
    pub fn annotate(&self, doc: &mut Vec<u8>) {
        if self.norm.is_none() || doc.last() != Some(&b'}') {
            return;
        }
        let mut indices: Vec<&usize> = self.reports.keys().collect();
        indices.sort();
        let list: Vec<Value> = indices
            .into_iter()
            .map(|i| {
                let (name, r) = &self.reports[i];
                let mut m = report_json(r, name);
                m.insert("index".into(), json!(i));
                Value::Object(m)
            })
            .collect();
        doc.pop();
        doc.extend_from_slice(b",\"normalized\":");
        doc.extend_from_slice(json!(list).to_string().as_bytes());
        doc.push(b'}');
    }
}

fn report_json(r: &Report, name: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("ok".into(), json!(r.is_ok()));
    m.insert("written_name".into(), json!(r.name_as_written(name)));
    m.insert("repairs".into(), json!(r.fixes));
    if r.fixes_omitted > 0 {
        m.insert("repairs_omitted".into(), json!(r.fixes_omitted));
    }
    m.insert("errors".into(), json!(r.errors));
    if let Some(f) = r.feedback(name) {
        m.insert("feedback".into(), json!(f));
    }
    m
}

/// Arguments of `toolstream normalize`.
#[derive(Clone, Debug, clap::Args)]
pub struct NormalizeArgs {
    /// The tools the model was offered: OpenAI chat `tools`, OpenAI
    /// Responses function tools, Anthropic `tools`, Gemini
    /// `functionDeclarations`, an MCP `tools/list` result, or bare
    /// `{name, parameters}` (a list, or a request body holding `tools`).
    #[arg(long, value_name = "FILE")]
    pub tools: PathBuf,
    #[command(flatten)]
    pub switches: SwitchArgs,
    /// NDJSON calls, one per line: `{"name": …, "arguments": <object or
    /// string>}` (`input` is read as `arguments`); `-` or nothing: standard input.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Normalizes one input line (a call) into its output line.
fn line_json(catalog: &Catalog, call: &Value) -> Result<Value, String> {
    let obj = call.as_object().ok_or("not a JSON object")?;
    let obj = match obj.get("function") {
        Some(Value::Object(f)) => f,
        _ => obj,
    };
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .ok_or("no \"name\" string")?;
    let args = obj
        .get("arguments")
        .or_else(|| obj.get("input"))
        .unwrap_or(&Value::Null);
    // A string is the arguments text (the OpenAI wire form).
    let out = match args {
        Value::String(text) => catalog.normalize(name, text),
        other => catalog.normalize_value(name, other),
    };
    let arguments = serde_json::from_str::<Value>(&out.arguments)
        .unwrap_or_else(|_| Value::String(out.arguments.clone()));
    let mut m = Map::new();
    m.insert("ok".into(), json!(out.report.is_ok()));
    m.insert(
        "call".into(),
        json!({"name": out.name, "arguments": arguments}),
    );
    m.insert("repairs".into(), json!(out.report.fixes));
    if out.report.fixes_omitted > 0 {
        m.insert("repairs_omitted".into(), json!(out.report.fixes_omitted));
    }
    m.insert("errors".into(), json!(out.report.errors));
    if let Some(f) = out.feedback() {
        m.insert("feedback".into(), json!(f));
    }
    Ok(Value::Object(m))
}

/// Runs `toolstream normalize`: exit status 0 even when calls are invalid
/// (that is data), 1 when an input line was not a call, 2 when the tools
/// file or the input cannot be read.
pub fn run(args: &NormalizeArgs) -> ExitCode {
    let tools = match load_tools(&args.tools) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("toolstream normalize: {e}");
            return ExitCode::from(2);
        }
    };
    let catalog = Catalog::with_options(&tools, args.switches.options());
    for (name, err) in catalog.schema_errors() {
        eprintln!("toolstream normalize: warning: the schema of tool `{name}` does not compile ({err}); its calls are coerced but not validated");
    }
    let input: Box<dyn BufRead> = match args.file.as_deref() {
        None => Box::new(io::stdin().lock()),
        Some(p) if p.as_os_str() == "-" => Box::new(io::stdin().lock()),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => Box::new(io::BufReader::new(f)),
            Err(e) => {
                eprintln!("toolstream normalize: {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
    };
    let mut w = BufWriter::new(io::stdout().lock());
    let mut bad_lines = 0usize;
    let res = (|| -> io::Result<()> {
        for (n, line) in input.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let parsed = serde_json::from_str::<Value>(&line)
                .map_err(|e| format!("not JSON: {e}"))
                .and_then(|v| line_json(&catalog, &v));
            let out = match parsed {
                Ok(v) => v,
                Err(e) => {
                    bad_lines += 1;
                    eprintln!("toolstream normalize: line {}: {e}", n + 1);
                    json!({"ok": false, "line": n + 1, "input_error": e})
                }
            };
            serde_json::to_writer(&mut w, &out)?;
            w.write_all(b"\n")?;
        }
        w.flush()
    })();
    match res {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolstream normalize: {e}");
            ExitCode::from(2)
        }
        Ok(()) if bad_lines > 0 => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_normalized_or_reported() {
        let tools = read_tools(
            r#"[{"name": "get_weather", "input_schema": {"type": "object",
                "properties": {"city": {"type": "string"}}, "required": ["city"]}}]"#,
        )
        .unwrap()
        .0;
        let cat = Catalog::new(&tools);
        let v = line_json(
            &cat,
            &json!({"name": "GetWeather", "arguments": "{\"City\": \"Paris\"}"}),
        )
        .unwrap();
        assert_eq!(v["ok"], true);
        assert_eq!(
            v["call"],
            json!({"name": "get_weather", "arguments": {"city": "Paris"}})
        );
        assert!(v.get("feedback").is_none());
        let v = line_json(&cat, &json!({"name": "get_weather", "input": {}})).unwrap();
        assert_eq!(v["ok"], false);
        assert_eq!(v["errors"][0]["kind"], "missing_required");
        assert!(v["feedback"].as_str().unwrap().contains("get_weather.city"));
        assert!(line_json(&cat, &json!([1])).is_err());
    }
}
