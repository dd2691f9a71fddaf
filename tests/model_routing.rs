//! A model id never makes the parser blind (#42 §1): on every output of the
//! corpus, the calls parsed with a model's routing (`--model`,
//! [`Config::for_model`]) include every call auto-detection finds.
//!
//! Which (output, id) pairs are checked:
//! * every output whose producing model is known (a public-corpus row's
//!   `model`, an Ollama parser fixture mapped to a model of that parser's
//!   family below, the `model` of `corpus/handmade/newest_formats.jsonl`),
//!   against **every** id of the registry's list
//!   (`corpus/toolkit/model_ids.tsv`, the ids the routing tests name, the
//!   corpus's own model ids) that belongs to the same family;
//! * every output written in answer to a *prompt* rather than a chat
//!   template (`corpus/real`: SmolLM2 and Gemma 3 asked for JSON, Hermes,
//!   XML, pythonic … calls; `corpus/handmade/*.txt`), against every id of
//!   the list, whatever its family: any model can be prompted that way.
//!
//! Calls are compared as a multiset of (name, arguments as a JSON value).
//! The public corpus (`../shared/corpus/public`) is reference data kept
//! beside the repository; without it that part is skipped with a message
//! (`tests/common/shared.rs`).

mod common;

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;
use toolstream::model::{route, Family, ModelSpec};
use toolstream::{parse, Config, Dialect};

/// One output of the corpus.
struct Output {
    label: String,
    text: String,
    /// The model that wrote it, if known.
    producer: Option<String>,
    /// Written in answer to a prompt's format instructions.
    prompted: bool,
}

/// The model ids the registry knows.
fn registry_ids(outputs: &[Output]) -> Vec<String> {
    let mut ids: Vec<String> = include_str!("../corpus/toolkit/model_ids.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .collect();
    // The ids the routing table's own tests name, and newer families'.
    for id in [
        "meta-llama/Llama-3.1-8B-Instruct",
        "meta-llama/Llama-3.3-70B-Instruct",
        "meta-llama/Llama-3.2-3B-Instruct",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        "Qwen/Qwen2.5-7B-Instruct",
        "Qwen/Qwen3-8B",
        "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        "Qwen/Qwen3.5-35B-A3B",
        "Qwen/Qwen3.6-35B-A3B",
        "deepseek-ai/DeepSeek-R1-0528",
        "deepseek-ai/DeepSeek-V3.1",
        "deepseek-ai/DeepSeek-V3.2",
        "deepseek-ai/DeepSeek-V4-Flash",
        "moonshotai/Kimi-K2-Instruct",
        "moonshotai/Kimi-K2.5",
        "zai-org/GLM-4.5",
        "zai-org/GLM-4.7",
        "MiniMaxAI/MiniMax-M2",
        "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
        "mistralai/Ministral-3-8B-Instruct-2512",
        "google/gemma-3-27b-it",
        "google/gemma-4-31b-it",
        "google/functiongemma-270m-it",
        "openai/gpt-oss-20b",
        "ibm-granite/granite-3.0-8b-instruct",
        "ibm-granite/granite-3.3-8b-instruct",
        "ibm-granite/granite-4.0-h-small",
        "microsoft/Phi-4-mini-instruct",
        "CohereForAI/c4ai-command-r7b-12-2024",
        "CohereForAI/c4ai-command-r-plus",
        "meetkai/functionary-small-v3.2",
        "Salesforce/xLAM-7b-fc-r",
        "Team-ACE/ToolACE-8B",
        "internlm/internlm2_5-7b-chat",
        "tencent/Hunyuan-A13B-Instruct",
        "nvidia/Llama-3.3-Nemotron-Super-49B-v1",
        "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B",
        "ByteDance-Seed/Seed-OSS-36B-Instruct",
        "stepfun-ai/step3",
        "LiquidAI/LFM2-1.2B",
        "allenai/Olmo-3-7B-Instruct",
        "THUDM/glm-4-9b-chat",
        "NousResearch/Hermes-2-Pro-Llama-3-8B",
    ] {
        ids.push(id.to_owned());
    }
    for o in outputs {
        if let Some(p) = &o.producer {
            ids.push(p.clone());
        }
    }
    ids.sort();
    ids.dedup();
    ids
}

/// The model an Ollama parser fixture stands for (the parser's family), or
/// None where the parser is generic or its model is not named.
fn ollama_parser_model(parser: &str) -> Option<&'static str> {
    Some(match parser {
        "gemma4" => "google/gemma-4-31b-it",
        "glm46" => "zai-org/GLM-4.6",
        "glm47" => "zai-org/GLM-4.7",
        // x/models/glm4_moe_lite: GLM-4.7-Flash.
        "parser" => "zai-org/GLM-4.7-Flash",
        "harmonyparser" => "openai/gpt-oss-20b",
        "ministral" => "mistralai/Ministral-3-8B-Instruct-2512",
        "qwen3coder" => "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        "qwen3" => "Qwen/Qwen3-8B",
        "qwen35" => "Qwen/Qwen3.5-35B-A3B",
        "qwen38" => "Qwen/Qwen3.8-35B-A3B",
        "qwen3vl_nonthinking" => "Qwen/Qwen3-VL-8B-Instruct",
        "qwen3vl_thinking" => "Qwen/Qwen3-VL-8B-Thinking",
        "deepseek3" => "deepseek-ai/DeepSeek-V3.1",
        "olmo3" => "allenai/Olmo-3-7B-Instruct",
        "lfm2" => "LiquidAI/LFM2-1.2B",
        "nemotron3nano" => "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B",
        "cohere" => "CohereLabs/command-a-03-2025",
        _ => return None,
    })
}

fn repo_outputs() -> Vec<Output> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut out = Vec::new();
    for f in ["real/smollm2-135m.jsonl", "real/gemma3-270m.jsonl"] {
        for line in std::fs::read_to_string(root.join(f)).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            out.push(Output {
                label: v["id"].as_str().unwrap_or_default().to_owned(),
                text: v["text"].as_str().unwrap_or_default().to_owned(),
                producer: None,
                prompted: true,
            });
        }
    }
    // The newest families' template forms (#42), written by hand.
    for line in std::fs::read_to_string(root.join("handmade/newest_formats.jsonl"))
        .unwrap()
        .lines()
    {
        let v: Value = serde_json::from_str(line).unwrap();
        out.push(Output {
            label: v["id"].as_str().unwrap_or_default().to_owned(),
            text: v["input"].as_str().unwrap_or_default().to_owned(),
            producer: v["model"].as_str().map(str::to_owned),
            prompted: false,
        });
    }
    for e in std::fs::read_dir(root.join("handmade")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "txt") {
            out.push(Output {
                label: p.display().to_string(),
                text: std::fs::read_to_string(&p).unwrap(),
                producer: None,
                prompted: true,
            });
        }
    }
    out
}

fn public_outputs() -> Vec<Output> {
    let Some(dir) = common::shared::path("corpus/public") else {
        return Vec::new();
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && !p.to_string_lossy().contains("ground_truth")
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let ollama = f.to_string_lossy().contains("ollama");
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let Some(raw) = v["raw_output"].as_str() else {
                continue;
            };
            let model = v["model"].as_str().unwrap_or_default();
            let producer = if ollama {
                let parser = model
                    .split('\'')
                    .nth(1)
                    .unwrap_or(if model.starts_with("gemma4") {
                        "gemma4"
                    } else {
                        ""
                    });
                ollama_parser_model(parser).map(str::to_owned)
            } else {
                // BFCL writes `org_name`; the notebooks name the model.
                Some(model.replacen('_', "/", 1))
            };
            out.push(Output {
                label: v["id"].as_str().unwrap_or_default().to_owned(),
                text: raw.to_owned(),
                producer,
                // BFCL and the Hermes notebooks prompted the models, but a
                // model may answer in its own template's form: checked
                // against its family's ids.
                prompted: false,
            });
        }
    }
    out
}

type Call = (String, Value);

fn calls(text: &str, cfg: &Config) -> Vec<Call> {
    parse(text.as_bytes(), cfg)
        .calls
        .into_iter()
        .map(|c| {
            let args = serde_json::from_str(&c.arguments).unwrap_or(Value::Null);
            (c.name.to_string(), args)
        })
        .collect()
}

/// The calls of `auto` that `routed` lacks.
fn missing(auto: &[Call], routed: &[Call]) -> Vec<Call> {
    let mut left: Vec<&Call> = routed.iter().collect();
    let mut miss = Vec::new();
    for c in auto {
        match left.iter().position(|r| *r == c) {
            Some(k) => {
                left.swap_remove(k);
            }
            None => miss.push(c.clone()),
        }
    }
    miss
}

#[test]
fn a_model_id_never_hides_a_call_auto_detection_finds() {
    let mut outputs = repo_outputs();
    let public = public_outputs();
    let had_public = !public.is_empty();
    outputs.extend(public);
    let ids = registry_ids(&outputs);
    // Ids route to a few distinct dialect lists: parse once per list.
    let mut groups: BTreeMap<Vec<&'static str>, (Config, Vec<&str>)> = BTreeMap::new();
    let mut family_of: HashMap<&str, Family> = HashMap::new();
    for id in &ids {
        let cfg = Config::for_model(id);
        let key: Vec<&'static str> = cfg.dialects.iter().map(|d| Dialect::name(*d)).collect();
        groups.entry(key).or_insert((cfg, Vec::new())).1.push(id);
        family_of.insert(id, ModelSpec::parse(id).family);
    }
    let mut checked = 0usize;
    let mut failures = Vec::new();
    for o in &outputs {
        let auto = calls(&o.text, &Config::default());
        if auto.is_empty() {
            continue;
        }
        let fam = o.producer.as_deref().map(|p| ModelSpec::parse(p).family);
        for (cfg, members) in groups.values() {
            let relevant: Vec<&&str> = members
                .iter()
                .filter(|id| o.prompted || fam.is_some_and(|f| family_of[**id] == f))
                .collect();
            if relevant.is_empty() {
                continue;
            }
            checked += relevant.len();
            if cfg.dialects.is_empty() {
                continue;
            }
            let miss = missing(&auto, &calls(&o.text, cfg));
            if !miss.is_empty() {
                failures.push(format!(
                    "{} (by {:?}): with --model {} ({} ids of this routing) {} of {} calls are lost: {:?}",
                    o.label,
                    o.producer,
                    relevant[0],
                    relevant.len(),
                    miss.len(),
                    auto.len(),
                    miss.iter().map(|c| &c.0).collect::<Vec<_>>()
                ));
            }
        }
    }
    eprintln!(
        "model routing: {} outputs, {} ids in {} routings, {checked} (output, id) pairs checked{}",
        outputs.len(),
        ids.len(),
        groups.len(),
        if had_public {
            ""
        } else {
            " (public corpus absent: repository corpus only)"
        }
    );
    assert!(checked > 0);
    assert!(
        failures.is_empty(),
        "{} (output, routing) pairs lose calls:\n{}",
        failures.len(),
        failures
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The issue's two cases, spelled out: a Llama 3.x id reads the bare
/// `{"name", "parameters"}` object those models write, and Qwen 3.5+ ids
/// read the Qwen3-Coder XML form.
#[test]
fn llama_bare_json_and_qwen35_xml_are_read_with_their_ids() {
    let bare = r#"{"name": "get_weather", "parameters": {"city": "Paris"}}"#;
    for id in [
        "meta-llama/Llama-3.1-8B-Instruct",
        "llama3.3:70b",
        "meta-llama/Llama-3.2-3B-Instruct",
    ] {
        let c = calls(bare, &Config::for_model(id));
        assert_eq!(c.len(), 1, "{id}");
        assert_eq!(c[0].1, serde_json::json!({"city": "Paris"}), "{id}");
    }
    let xml = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>";
    for id in [
        "Qwen/Qwen3.5-35B-A3B",
        "qwen3.5:35b",
        "Qwen/Qwen3.6-35B-A3B",
        "Qwen/Qwen3-8B",
    ] {
        assert!(route(id).dialects.contains(&Dialect::Qwen3Coder), "{id}");
        let c = calls(xml, &Config::for_model(id));
        assert_eq!(c.len(), 1, "{id}");
        assert_eq!(c[0].1, serde_json::json!({"city": "Paris"}), "{id}");
    }
}

/// Recall with `--model` on the public corpus: for each row whose producing
/// model is known, the calls parsed with that model's routing, against auto
/// mode (printed; with `--model` it must find at least as many).
#[test]
fn recall_with_the_producers_model_id() {
    let rows = public_outputs();
    if rows.is_empty() {
        return;
    }
    let (mut rows_n, mut auto_calls, mut model_calls, mut auto_rows, mut model_rows) =
        (0, 0, 0, 0, 0);
    for o in rows.iter().filter(|o| o.producer.is_some()) {
        let producer = o.producer.as_deref().unwrap_or_default();
        let a = calls(&o.text, &Config::default()).len();
        let m = calls(&o.text, &Config::for_model(producer)).len();
        rows_n += 1;
        auto_calls += a;
        model_calls += m;
        auto_rows += usize::from(a > 0);
        model_rows += usize::from(m > 0);
    }
    eprintln!(
        "public rows with a known producer: {rows_n}; rows with calls auto {auto_rows}, --model {model_rows}; calls auto {auto_calls}, --model {model_calls}"
    );
    assert!(model_calls >= auto_calls && model_rows >= auto_rows);
}
