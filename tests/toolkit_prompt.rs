//! Emulation prompts: golden files for every format × size class
//! (`corpus/toolkit/prompts/`, regenerate with `UPDATE_GOLDEN=1`), no
//! placeholders, and what each prompt tells the model to write parses back
//! with the dialect the registry names.
#![cfg(feature = "toolkit")]

use std::path::PathBuf;

use serde_json::Value;
use toolstream::toolkit::adapt::ToolChoice;
use toolstream::toolkit::convert::{parser_tools, read_tools};
use toolstream::toolkit::prompt::{example_call, render, render_call, render_calls, PromptOptions};
use toolstream::toolkit::{EmulationFormat, Registry, SizeClass, Tool};
use toolstream::{parse, Config};

fn tools() -> Vec<Tool> {
    let v: Value =
        serde_json::from_str(include_str!("../corpus/toolkit/tools/basic.json")).unwrap();
    read_tools(&v).unwrap()
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/toolkit/prompts")
}

const SIZES: [SizeClass; 3] = [SizeClass::Small, SizeClass::Medium, SizeClass::Large];

#[test]
fn golden_prompts() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let tools = tools();
    let mut mismatches = Vec::new();
    for f in EmulationFormat::ALL {
        for s in SIZES {
            let text = render(&tools, &PromptOptions::new(f, s));
            let path = golden_dir().join(format!("{f}-{s}.txt"));
            if update {
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
            if want != text {
                mismatches.push(format!("{}\n--- got ---\n{text}", path.display()));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}

#[test]
fn no_placeholders() {
    let tools = tools();
    for f in EmulationFormat::ALL {
        for s in SIZES {
            for c in [
                ToolChoice::Auto,
                ToolChoice::Required,
                ToolChoice::Tool("Write".into()),
            ] {
                let text = render(&tools, &PromptOptions::new(f, s).with_tool_choice(c));
                for bad in [
                    "tool_name",
                    "arg1",
                    "value1",
                    "NAME",
                    "{...}",
                    "tool1",
                    "<arg1>",
                ] {
                    assert!(!text.contains(bad), "{f}-{s} holds {bad}:\n{text}");
                }
            }
        }
    }
}

/// Parses `text` with `cfg` and returns `(name, arguments)` of each call.
fn calls(text: &str, cfg: &Config) -> Vec<(String, Value)> {
    parse(text.as_bytes(), cfg)
        .calls
        .into_iter()
        .map(|c| (c.name.to_string(), c.arguments_value().unwrap()))
        .collect()
}

#[test]
fn every_example_parses_back_with_the_registry_dialect() {
    let tools = tools();
    for f in EmulationFormat::ALL {
        let cfg = Config::default()
            .with_dialects(vec![f.dialect()])
            .with_tools(parser_tools(&tools));
        for t in &tools {
            let args = example_call(t);
            let text = render_call(f, &t.name, &args);
            assert_eq!(
                calls(&text, &cfg),
                vec![(t.name.clone(), args.clone())],
                "{f}:\n{text}"
            );
            // With the text a model typically writes around it.
            let wrapped = format!("I'll do that now.\n{text}\n");
            assert_eq!(
                calls(&wrapped, &cfg),
                vec![(t.name.clone(), args)],
                "{f}:\n{wrapped}"
            );
        }
        // Several calls in one reply.
        let two: Vec<(String, Value)> = tools
            .iter()
            .take(2)
            .map(|t| (t.name.clone(), example_call(t)))
            .collect();
        assert_eq!(calls(&render_calls(f, &two), &cfg), two, "{f}");
    }
}

#[test]
fn models_get_a_format_their_dialect_parses() {
    let reg = Registry::builtin();
    let tools = tools();
    for id in [
        "HuggingFaceTB/SmolLM2-135M-Instruct",
        "google/gemma-3-270m-it",
        "llama2:7b",
        "claude-2.1",
        "mistralai/Mistral-7B-Instruct-v0.2",
        "unknown-model",
    ] {
        let m = reg.lookup(id);
        let opts = PromptOptions::for_model(&m);
        let prompt = render(&tools, &opts);
        // The example inside the prompt is exactly what render_call writes.
        let t = &tools[0];
        let text = render_call(m.emulation, &t.name, &example_call(t));
        assert!(prompt.contains(&text), "{id}: {prompt}");
        let cfg = Config::default()
            .with_dialects(vec![m.emulation_dialect()])
            .with_tools(parser_tools(&tools));
        assert_eq!(calls(&text, &cfg).len(), 1, "{id}");
    }
}
