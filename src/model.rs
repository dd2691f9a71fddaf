//! Model ids: what a model is, and which dialects and reasoning convention
//! to expect from it.
//!
//! [`ModelSpec::parse`] reads the ids people actually pass around —
//! `gpt-4o`, `claude-3.5-sonnet`, `llama3.3:70b`,
//! `meta-llama/Llama-3.3-70B-Instruct`, `ollama/qwen3:32b`,
//! `mycompany/llama3-ft`, `Qwen/Qwen3-Coder-30B-A3B-Instruct` — into
//! provider, organisation, family, version, size and tag, and tells
//! fine-tunes and unknown uploads apart (`custom`). [`route`] (also
//! [`Dialect::for_model`](crate::Dialect::for_model) and
//! [`Config::for_model`](crate::Config::for_model)) maps the model to the
//! dialects to recognise.
//!
//! # Routing table
//!
//! The table lists dialects **by name** and resolves them with
//! [`Dialect::from_name`], so families whose dialect lives elsewhere (the
//! XML family: `qwen3_coder`, `glm45`, `glm47`, `minimax_m2`, `seed_oss`,
//! `dsml`, `step3`) route as soon as that dialect exists; until then their
//! other dialects are used, or auto-detection when none is left.
//!
//! | family | dialects | reasoning |
//! |---|---|---|
//! | GPT-OSS | `harmony` | Harmony `analysis` channel (prefill `<\|start\|>assistant`) |
//! | Llama 3.1 / 3.3 | `llama3_json` | — |
//! | Llama 3.2 1B/3B, Llama 4 | `pythonic`, `llama3_json` | — |
//! | Qwen 2.5 | `hermes` | — |
//! | Qwen 3, QwQ | `hermes`, `qwen3_coder` | `<think>` |
//! | Qwen3-Coder, Qwen 3.5+ | `qwen3_coder`, `hermes` | `<think>`; a `<tool_call>` in it is a call |
//! | Nemotron-Nano v3, Step-3.5 | `qwen3_coder`, `hermes` | `<think>` |
//! | DeepSeek V3 / R1 / V3.1 | `deepseek` | `<think>` (R1: prefilled) |
//! | DeepSeek V3.2 / V4 / V4.1 | `dsml`, `deepseek` | `<think>`; a DSML block in it is a call |
//! | Mistral, Mixtral, Ministral, Magistral, Devstral | `mistral` | `[THINK]` (Magistral, Ministral 3) |
//! | Kimi K2 / K2.5 | `kimi_k2` | `<think>`; Kimi-VL-Thinking `◁think▷` |
//! | Kimi K3 | `kimi_k3`, `kimi_k2` | `<\|open\|>think<\|sep\|>` section (prefill) |
//! | GLM-4.5 / 4.6 | `glm45` | `<think>` |
//! | GLM-4.7 / 5 | `glm47` | `<think>` |
//! | GLM-4 9B / ChatGLM | `chatglm` | — |
//! | MiniMax-M2 | `minimax_m2` | `<think>` |
//! | MiniMax-M1, Jamba, Hunyuan, Hermes, Granite 4, granite-20b-fc | `hermes` | `<think>` (Hunyuan, MiniMax) |
//! | Granite 3.0 – 3.3 | `granite`, `hermes` | Granite 3.2+: `<think>` + `<response>` |
//! | Gemma 4 | `gemma4` | `<\|channel>thought` |
//! | FunctionGemma | `functiongemma` | — |
//! | Gemma 2 / 3 | `pythonic`, `json` | — |
//! | Phi-4-mini | `phi4_mini` | — |
//! | Command R7B / A | `cohere` | `<\|START_THINKING\|>` |
//! | Command R / R+ | `cohere`, `json` | — |
//! | Functionary | `functionary`, `llama3_json` | — |
//! | xLAM | `json` | — |
//! | ToolACE | `pythonic` | — |
//! | InternLM / Intern-S1 | `internlm` | `<think>` (Intern-S1) |
//! | Nemotron (Llama-3.x-Nemotron) | `nemotron`, `llama3_json` | `<think>` |
//! | Seed-OSS | `seed_oss` | `<seed:think>` |
//! | Step-3 | `step3` | `<think>` |
//! | LFM2 | `lfm2` | `<think>` |
//! | Olmo 3 | `olmo3` | `<think>` |
//! | GPT-4/5, o-series, Claude, Gemini (APIs), unknown | auto | — |
//!
//! Every routed family also allows the forms of its other generations (the
//! table's other rows of the same family: a DeepSeek id reads DSML and the
//! V3 tokens, a Kimi id K2 and K3 markup) and the forms any model writes when
//! a prompt asks for them ([`PROMPTED`]: JSON, Hermes tags, pythonic lists,
//! plain XML), after its own: a model id orders the dialects and picks the
//! reasoning convention, but never hides a call auto-detection would find
//! (`tests/model_routing.rs` checks this over the whole corpus).
//!
//! Custom models (a fine-tune, an unknown organisation's upload) and
//! unknown ones use auto-detection; a custom model's family dialects are
//! kept as [`ModelRoute::preferred`].

use std::fmt;
use std::str::FromStr;

use crate::config::Config;
use crate::dialect::Dialect;

/// The model family an id belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// OpenAI gpt-oss.
    GptOss,
    /// OpenAI API models (GPT-3.5/4/4o/5, o-series).
    Gpt,
    /// Anthropic Claude.
    Claude,
    /// Google Gemini.
    Gemini,
    /// Google Gemma (2, 3, 4).
    Gemma,
    /// Google FunctionGemma.
    FunctionGemma,
    /// Meta Llama.
    Llama,
    /// Alibaba Qwen (chat models, QwQ).
    Qwen,
    /// Qwen3-Coder and the Qwen 3.5+ XML generation.
    QwenCoder,
    /// DeepSeek.
    DeepSeek,
    /// Mistral AI (Mistral, Mixtral, Ministral, Magistral, Devstral, Codestral).
    Mistral,
    /// Moonshot Kimi.
    Kimi,
    /// Zhipu GLM-4.5 and later.
    Glm,
    /// Zhipu GLM-4 9B / ChatGLM.
    ChatGlm,
    /// MiniMax.
    MiniMax,
    /// IBM Granite.
    Granite,
    /// Microsoft Phi.
    Phi,
    /// Cohere Command.
    Cohere,
    /// NousResearch Hermes.
    Hermes,
    /// MeetKai Functionary.
    Functionary,
    /// Salesforce xLAM.
    Xlam,
    /// ToolACE.
    ToolAce,
    /// Shanghai AI Lab InternLM / Intern-S1.
    InternLm,
    /// AI21 Jamba.
    Jamba,
    /// Tencent Hunyuan.
    Hunyuan,
    /// NVIDIA Nemotron.
    Nemotron,
    /// ByteDance Seed-OSS.
    SeedOss,
    /// StepFun Step.
    Step,
    /// Liquid LFM2.
    Lfm,
    /// AllenAI Olmo.
    Olmo,
    /// Not recognised.
    Unknown,
}

impl Family {
    /// A stable lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            Family::GptOss => "gpt-oss",
            Family::Gpt => "gpt",
            Family::Claude => "claude",
            Family::Gemini => "gemini",
            Family::Gemma => "gemma",
            Family::FunctionGemma => "functiongemma",
            Family::Llama => "llama",
            Family::Qwen => "qwen",
            Family::QwenCoder => "qwen-coder",
            Family::DeepSeek => "deepseek",
            Family::Mistral => "mistral",
            Family::Kimi => "kimi",
            Family::Glm => "glm",
            Family::ChatGlm => "chatglm",
            Family::MiniMax => "minimax",
            Family::Granite => "granite",
            Family::Phi => "phi",
            Family::Cohere => "cohere",
            Family::Hermes => "hermes",
            Family::Functionary => "functionary",
            Family::Xlam => "xlam",
            Family::ToolAce => "toolace",
            Family::InternLm => "internlm",
            Family::Jamba => "jamba",
            Family::Hunyuan => "hunyuan",
            Family::Nemotron => "nemotron",
            Family::SeedOss => "seed-oss",
            Family::Step => "step",
            Family::Lfm => "lfm",
            Family::Olmo => "olmo",
            Family::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The reasoning convention a model uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reasoning {
    /// No reasoning block expected.
    None,
    /// `<think>…</think>`.
    Think,
    /// `<seed:think>…</seed:think>`.
    SeedThink,
    /// `[THINK]…[/THINK]`.
    BracketThink,
    /// `<|START_THINKING|>…<|END_THINKING|>`.
    Cohere,
    /// The Harmony `analysis` channel.
    Harmony,
    /// `<|channel>thought⏎…<channel|>`.
    GemmaChannel,
    /// `<think>…</think><response>…</response>`.
    GraniteThink,
    /// `◁think▷…◁/think▷`.
    KimiVl,
    /// Kimi K3's `<|open|>think<|sep|>…<|close|>think<|sep|>` section.
    KimiSections,
}

/// A parsed model id: the one parser of model ids in the crate (the
/// toolkit's capability registry reads these fields, it does not parse ids
/// itself). Provider prefixes (`ollama/`, `openrouter/`, `hf.co/`, several
/// in a row), GGUF file names and paths (`…/Qwen2.5-7B-Instruct-Q4_K_M.gguf`,
/// split files), GGUF repository suffixes and quantisation tokens
/// (`-GGUF`, `Q4_K_M`, `iq3_xxs`, `fp16`, `4bit`, in the name or in an
/// Ollama tag) are taken off before the name is read.
///
/// ```
/// use toolstream::model::{Family, ModelSpec};
/// let m = ModelSpec::parse("meta-llama/Llama-3.3-70B-Instruct");
/// assert_eq!(m.org.as_deref(), Some("meta-llama"));
/// assert_eq!(m.family, Family::Llama);
/// assert_eq!(m.version.as_deref(), Some("3.3"));
/// assert_eq!(m.size.as_deref(), Some("70b"));
/// assert!(!m.custom);
///
/// let m = ModelSpec::parse("ollama/qwen3:32b");
/// assert_eq!((m.provider.as_deref(), m.family, m.size.as_deref()), (Some("ollama"), Family::Qwen, Some("32b")));
///
/// let m = ModelSpec::parse("hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M");
/// assert_eq!((m.name.as_str(), m.quantization.as_deref()), ("Qwen2.5-7B-Instruct", Some("Q4_K_M")));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSpec {
    /// The id as given.
    pub id: String,
    /// The serving provider prefix (`ollama`, `openrouter`, `bedrock`, …).
    pub provider: Option<String>,
    /// The organisation (`meta-llama`, `Qwen`, `deepseek-ai`, …).
    pub org: Option<String>,
    /// The model name, without provider, organisation and tag.
    pub name: String,
    /// The family.
    pub family: Family,
    /// The family version (`3.3`, `v3.1`, `4.5`, `4o`), if written.
    pub version: Option<String>,
    /// The parameter count (`70b`, `30b-a3b`, `8x7b`, `e4b`), if written.
    pub size: Option<String>,
    /// An Ollama-style tag (`32b`, `latest`, `8b-instruct-q4_K_M`).
    pub tag: Option<String>,
    /// A fine-tune or an upload by an organisation that is not the family's
    /// publisher or a known re-packager.
    pub custom: bool,
    /// The quantisation token taken off the name or tag (`Q4_K_M`, `fp16`).
    pub quantization: Option<String>,
}

/// Serving providers and hubs that prefix ids.
const PROVIDERS: &[&str] = &[
    "ollama",
    "ollama_chat",
    "openrouter",
    "together",
    "together_ai",
    "togetherai",
    "groq",
    "fireworks",
    "fireworks_ai",
    "bedrock",
    "vertex_ai",
    "vertex",
    "azure",
    "azure_ai",
    "huggingface",
    "hf",
    "hf.co",
    "huggingface.co",
    "lmstudio",
    "lm_studio",
    "vllm",
    "hosted_vllm",
    "deepinfra",
    "sambanova",
    "cerebras",
    "anyscale",
    "replicate",
    "nvidia_nim",
    "watsonx",
    "litellm",
    "mlx",
    "openai",
    "anthropic",
    "gemini",
    "mistral",
    "deepseek",
    "xai",
    "perplexity",
    "cohere",
];

/// Organisations whose name is also a provider prefix: kept as the org when
/// only the model name follows (`openai/gpt-oss-20b`).
const ORG_PROVIDERS: &[&str] = &[
    "openai",
    "anthropic",
    "mistral",
    "deepseek",
    "cohere",
    "gemini",
];

/// Is `t` a quantisation or packaging token (`q4_k_m`, `iq3_xxs`, `fp16`,
/// `gguf`, `4bit`, `awq`)?
fn is_quant(t: &str) -> bool {
    let t = t.to_ascii_lowercase();
    let t = t.as_str();
    if matches!(
        t,
        "gguf"
            | "ggml"
            | "awq"
            | "gptq"
            | "exl2"
            | "mlx"
            | "fp16"
            | "f16"
            | "bf16"
            | "fp32"
            | "f32"
            | "fp8"
            | "fp4"
            | "nvfp4"
            | "mxfp4"
            | "int4"
            | "int8"
            | "w4a16"
            | "w8a8"
            | "quantized"
            | "4bit"
            | "8bit"
            | "3bit"
            | "6bit"
            | "dwq"
            | "imatrix"
    ) {
        return true;
    }
    // q4_k_m, q8_0, q5_k_s, iq3_xxs, q4_0_4_4, ud-q4_k_xl (split on `-`).
    let core = t.strip_prefix('i').unwrap_or(t);
    if let Some(rest) = core.strip_prefix('q') {
        let mut parts = rest.split('_');
        if parts
            .next()
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        {
            return parts.all(|p| {
                !p.is_empty() && p.len() <= 3 && p.chars().all(|c| c.is_ascii_alphanumeric())
            });
        }
    }
    false
}

/// An id with its wrapping taken off (see [`ModelSpec`]).
#[derive(Debug, Default)]
struct Clean<'a> {
    provider: Option<String>,
    org: Option<&'a str>,
    name: &'a str,
    tag: Option<String>,
    quant: Option<String>,
}

/// Strips provider prefixes, `.gguf` file names, GGUF repository suffixes
/// and quantisation tokens.
fn clean_id(id: &str) -> Clean<'_> {
    let mut s = id.trim();
    // Paths to a GGUF file: keep the file name.
    if s.to_ascii_lowercase().ends_with(".gguf") {
        if let Some(p) = s.rfind(['/', '\\']) {
            s = &s[p + 1..];
        }
        s = &s[..s.len() - 5];
        // Split files: `model-00001-of-00003`.
        if let Some(p) = s.to_ascii_lowercase().find("-00001-of-") {
            s = &s[..p];
        }
    }
    let mut parts: Vec<&str> = s.split('/').filter(|p| !p.is_empty()).collect();
    let mut clean = Clean::default();
    while parts.len() >= 2 {
        let head = parts[0].to_ascii_lowercase();
        if !PROVIDERS.contains(&head.as_str())
            || parts.len() == 2 && ORG_PROVIDERS.contains(&head.as_str())
        {
            break;
        }
        if clean.provider.is_none() {
            clean.provider = Some(head);
        }
        parts.remove(0);
    }
    let last = parts.pop().unwrap_or_default();
    clean.org = parts.last().copied();
    let (name, tag) = match last.split_once(':') {
        Some((n, t)) => (n, Some(t)),
        None => (last, None),
    };
    // Tag: an Ollama tag (`8b-instruct-q4_K_M`) or a HF quant (`Q4_K_M`).
    if let Some(t) = tag {
        let toks: Vec<&str> = t.split('-').collect();
        let keep: Vec<&str> = toks.iter().copied().filter(|x| !is_quant(x)).collect();
        if let Some(q) = toks
            .iter()
            .find(|x| is_quant(x) && !x.eq_ignore_ascii_case("gguf"))
        {
            clean.quant = Some((*q).to_owned());
        }
        if !keep.is_empty() {
            clean.tag = Some(keep.join("-"));
        }
    }
    // Name: drop trailing quantisation / packaging tokens.
    let toks: Vec<&str> = name.split(['-', '.']).collect();
    let mut end = toks.len();
    let mut quant = None;
    while end > 1 && is_quant(toks[end - 1]) {
        if !matches!(
            toks[end - 1].to_ascii_lowercase().as_str(),
            "gguf" | "ggml" | "mlx"
        ) {
            quant = Some(toks[end - 1].to_owned());
        }
        end -= 1;
    }
    // Also `UD` (Unsloth dynamic) before the quant.
    if end > 1 && end < toks.len() && toks[end - 1].eq_ignore_ascii_case("ud") {
        end -= 1;
    }
    clean.name = name;
    if end < toks.len() {
        // Cut the original string at the same token boundary.
        let mut count = 0;
        for (i, c) in name.char_indices() {
            if c == '-' || c == '.' {
                count += 1;
                if count == end {
                    clean.name = &name[..i];
                    break;
                }
            }
        }
        if clean.quant.is_none() {
            clean.quant = quant;
        }
    }
    clean
}

/// Publishers and re-packagers whose uploads are the model itself.
const KNOWN_ORGS: &[&str] = &[
    "meta-llama",
    "meta",
    "qwen",
    "alibaba",
    "deepseek-ai",
    "deepseek",
    "mistralai",
    "mistral",
    "openai",
    "anthropic",
    "google",
    "moonshotai",
    "moonshot",
    "zai-org",
    "thudm",
    "zhipuai",
    "z-ai",
    "minimaxai",
    "minimax",
    "ibm-granite",
    "ibm",
    "microsoft",
    "cohereforai",
    "coherelabs",
    "cohere",
    "nousresearch",
    "meetkai",
    "salesforce",
    "team-ace",
    "internlm",
    "ai21labs",
    "tencent",
    "nvidia",
    "bytedance-seed",
    "bytedance",
    "stepfun-ai",
    "liquidai",
    "allenai",
    "unsloth",
    "bartowski",
    "lmstudio-community",
    "mlx-community",
    "thebloke",
    "ggml-org",
    "nexusflow",
    "gorilla-llm",
    "x-ai",
    "gemini",
];

/// Name parts that mark a fine-tune.
const CUSTOM_MARKS: &[&str] = &[
    "-ft",
    "finetune",
    "fine-tune",
    "lora",
    "-sft",
    "-dpo",
    "merge",
    "custom",
    "abliterated",
];

struct Rule {
    /// Compact patterns (lower case, no `-`, `_` or spaces); any may match.
    any: &'static [&'static str],
    /// Compact patterns that must not occur.
    none: &'static [&'static str],
    family: Family,
    dialects: &'static [&'static str],
    reasoning: Reasoning,
    prefill: Option<&'static str>,
    /// Calls written inside the reasoning block are extracted.
    calls_in_reasoning: bool,
}

macro_rules! rule {
    (calls_in_reasoning; $any:expr, $none:expr, $fam:ident, $d:expr, $r:ident) => {
        Rule {
            calls_in_reasoning: true,
            ..rule!($any, $none, $fam, $d, $r)
        }
    };
    ($any:expr, $none:expr, $fam:ident, $d:expr, $r:ident) => {
        Rule {
            any: $any,
            none: $none,
            family: Family::$fam,
            dialects: $d,
            reasoning: Reasoning::$r,
            prefill: None,
            calls_in_reasoning: false,
        }
    };
    ($any:expr, $none:expr, $fam:ident, $d:expr, $r:ident, $p:expr) => {
        Rule {
            any: $any,
            none: $none,
            family: Family::$fam,
            dialects: $d,
            reasoning: Reasoning::$r,
            prefill: Some($p),
            calls_in_reasoning: false,
        }
    };
}

/// First match wins, so specific rules come first.
const RULES: &[Rule] = &[
    rule!(
        &["gptoss"],
        &[],
        GptOss,
        &["harmony"],
        Harmony,
        "<|start|>assistant"
    ),
    rule!(
        &["functiongemma"],
        &[],
        FunctionGemma,
        &["functiongemma"],
        None
    ),
    rule!(&["gemma4"], &[], Gemma, &["gemma4"], GemmaChannel),
    rule!(&["gemma"], &[], Gemma, &["pythonic", "json"], None),
    rule!(
        &["nemotronnanov3", "nemotron3nano", "nemotronnano3"],
        &[],
        Nemotron,
        &["qwen3_coder", "hermes"],
        Think
    ),
    rule!(
        &["nemotron"],
        &[],
        Nemotron,
        &["nemotron", "llama3_json"],
        Think
    ),
    rule!(&["hermes"], &[], Hermes, &["hermes"], Think),
    rule!(
        &["functionary"],
        &[],
        Functionary,
        &["functionary", "llama3_json"],
        None
    ),
    rule!(&["toolace"], &[], ToolAce, &["pythonic"], None),
    rule!(&["xlam"], &[], Xlam, &["json"], Think),
    rule!(
        calls_in_reasoning;
        &[
            "qwen3coder",
            "qwen3.5",
            "qwen3.6",
            "qwen3.7",
            "qwen3.8",
            "qwen3.9",
            "qwen4",
            "qwen5"
        ],
        &[],
        QwenCoder,
        &["qwen3_coder", "hermes"],
        Think
    ),
    rule!(
        &["qwen3", "qwq"],
        &["qwen3coder"],
        Qwen,
        &["hermes", "qwen3_coder"],
        Think
    ),
    rule!(&["qwen"], &[], Qwen, &["hermes"], None),
    rule!(
        calls_in_reasoning;
        &["deepseekv3.2", "deepseekv4"],
        &[],
        DeepSeek,
        &["dsml", "deepseek"],
        Think
    ),
    rule!(
        &["deepseekr1"],
        &[],
        DeepSeek,
        &["deepseek"],
        Think,
        "<think>\n"
    ),
    rule!(
        &["deepseekcoder", "deepseekllm", "deepseekmath"],
        &["v2", "v3"],
        DeepSeek,
        &["json", "pythonic"],
        None
    ),
    rule!(&["deepseek"], &[], DeepSeek, &["deepseek"], Think),
    rule!(&["kimivl"], &[], Kimi, &["kimi_k2"], KimiVl),
    rule!(
        &["kimik3"],
        &[],
        Kimi,
        &["kimi_k3", "kimi_k2"],
        KimiSections,
        "<|open|>think<|sep|>"
    ),
    rule!(&["kimi", "moonshot"], &[], Kimi, &["kimi_k2"], Think),
    rule!(
        &["glm4.5", "glm4.6", "glm4.5v", "glm4.6v"],
        &[],
        Glm,
        &["glm45"],
        Think
    ),
    rule!(&["glm4.7", "glm5", "glmz"], &[], Glm, &["glm47"], Think),
    rule!(&["chatglm", "glm4"], &[], ChatGlm, &["chatglm"], None),
    rule!(
        &["minimaxm1", "minimaxtext"],
        &[],
        MiniMax,
        &["hermes"],
        Think
    ),
    rule!(&["minimax"], &[], MiniMax, &["minimax_m2"], Think),
    rule!(&["magistral"], &[], Mistral, &["mistral"], BracketThink),
    rule!(&["ministral3"], &[], Mistral, &["mistral"], BracketThink),
    rule!(
        &[
            "mistral",
            "mixtral",
            "ministral",
            "devstral",
            "codestral",
            "pixtral",
            "voxtral"
        ],
        &[],
        Mistral,
        &["mistral"],
        None
    ),
    rule!(
        &["llama4", "llama3.2"],
        &[],
        Llama,
        &["pythonic", "llama3_json"],
        None
    ),
    rule!(&["llama3"], &[], Llama, &["llama3_json"], None),
    rule!(&["llama"], &[], Llama, &["llama3_json", "pythonic"], None),
    rule!(
        &["granite20bfunctioncalling", "granite20bfc"],
        &[],
        Granite,
        &["hermes"],
        None
    ),
    rule!(&["granite4"], &[], Granite, &["hermes"], None),
    rule!(&["granite3.0"], &[], Granite, &["granite"], None),
    rule!(
        &["granite3.2", "granite3.3"],
        &[],
        Granite,
        &["granite", "hermes"],
        GraniteThink
    ),
    rule!(&["granite"], &[], Granite, &["granite", "hermes"], None),
    rule!(&["phi4mini"], &[], Phi, &["phi4_mini"], None),
    rule!(&["phi1", "phi2", "phi3", "phi4"], &[], Phi, &[], None),
    rule!(
        &["commandr7b", "commanda"],
        &[],
        Cohere,
        &["cohere"],
        Cohere
    ),
    rule!(
        &["command", "c4ai", "ayaexpanse"],
        &[],
        Cohere,
        &["cohere", "json"],
        None
    ),
    rule!(&["interns1"], &[], InternLm, &["internlm"], Think),
    rule!(&["internlm"], &[], InternLm, &["internlm"], None),
    rule!(&["jamba"], &[], Jamba, &["hermes"], None),
    rule!(&["hunyuan"], &[], Hunyuan, &["hermes"], Think),
    rule!(&["seedoss"], &[], SeedOss, &["seed_oss"], SeedThink),
    rule!(&["step3.5"], &[], Step, &["qwen3_coder", "hermes"], Think),
    rule!(&["step3", "step2", "stepfun"], &[], Step, &["step3"], Think),
    rule!(&["lfm2", "lfm"], &[], Lfm, &["lfm2"], Think),
    rule!(&["olmo3", "olmo"], &[], Olmo, &["olmo3"], Think),
    rule!(&["gpt", "chatgpt", "davinci"], &[], Gpt, &[], None),
    rule!(&["claude"], &[], Claude, &[], None),
    rule!(&["gemini"], &[], Gemini, &[], None),
];

/// The forms any instruction-following model writes when a prompt (not its
/// chat template) asks for tool calls: bare or fenced JSON, Hermes
/// `<tool_call>` tags, pythonic lists and plain XML. Every routed family
/// allows them after its own forms (BFCL, for one, prompts Llama, Qwen and
/// Mistral models for pythonic calls), so a model id orders the dialects and
/// never hides a call auto-detection would find. GLM's bare-name form is
/// among them as the `<tool_call>` tag's other reading
/// (`<tool_call>NAME</tool_call>`, a call without arguments).
pub const PROMPTED: &[Dialect] = &[
    Dialect::Json,
    Dialect::Hermes,
    Dialect::Pythonic,
    Dialect::XmlEmulation,
    Dialect::MorphXml,
    Dialect::Glm,
];

/// Dialect names the table refers to that belong to the XML family.
pub const XML_DIALECT_NAMES: &[&str] = &[
    "qwen3_coder",
    "glm45",
    "glm47",
    "minimax_m2",
    "seed_oss",
    "dsml",
    "step3",
];

/// Lower case without `-`, `_` and spaces (how names are matched).
pub(crate) fn compact(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

fn is_size(t: &str) -> bool {
    let t = t.strip_prefix('e').unwrap_or(t);
    let t = t.strip_prefix('a').unwrap_or(t);
    let Some(num) = t.strip_suffix('b').or_else(|| t.strip_suffix('m')) else {
        return false;
    };
    let num = match num.split_once('x') {
        Some((a, b)) if a.chars().all(|c| c.is_ascii_digit()) && !a.is_empty() => b,
        _ => num,
    };
    !num.is_empty()
        && num.chars().all(|c| c.is_ascii_digit() || c == '.')
        && num.starts_with(|c: char| c.is_ascii_digit())
}

/// The first size token of `s` (`70b`, `30b-a3b`, `8x7b`, `e4b`).
fn find_size(s: &str) -> Option<String> {
    let toks: Vec<&str> = s
        .split(['-', '_', ':', ' ', '/'])
        .filter(|t| !t.is_empty())
        .collect();
    for (k, t) in toks.iter().enumerate() {
        let t = t.to_ascii_lowercase();
        if is_size(&t) && !t.starts_with('a') {
            if let Some(next) = toks.get(k + 1).map(|n| n.to_ascii_lowercase()) {
                if next.starts_with('a') && is_size(&next) {
                    return Some(format!("{t}-{next}"));
                }
            }
            return Some(t);
        }
    }
    None
}

/// The version written right after the family keyword in `name`.
fn find_version(name: &str, family: Family) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let keys: &[&str] = match family {
        Family::GptOss | Family::Unknown => return None,
        Family::Gpt => &["gpt-", "gpt"],
        Family::Claude => &["claude-", "claude"],
        Family::Gemini => &["gemini-", "gemini"],
        Family::Gemma | Family::FunctionGemma => &["gemma-", "gemma"],
        Family::Llama => &["llama-", "llama"],
        Family::Qwen | Family::QwenCoder => &["qwen", "qwq"],
        Family::DeepSeek => &["deepseek-", "deepseek"],
        Family::Mistral => &[
            "small-",
            "medium-",
            "large-",
            "mistral-",
            "ministral-",
            "magistral-",
            "devstral-",
        ],
        Family::Kimi => &["kimi-", "kimi"],
        Family::Glm | Family::ChatGlm => &["glm-", "glm"],
        Family::MiniMax => &["minimax-", "minimax"],
        Family::Granite => &["granite-", "granite"],
        Family::Phi => &["phi-", "phi"],
        Family::Cohere => &["command-", "command"],
        Family::Hermes => &["hermes-", "hermes"],
        Family::Functionary => &["functionary-", "v"],
        Family::Xlam => &["xlam-", "xlam"],
        Family::ToolAce => &["toolace-", "toolace"],
        Family::InternLm => &["internlm", "intern-s"],
        Family::Jamba => &["jamba-", "jamba"],
        Family::Hunyuan => &["hunyuan-", "hunyuan"],
        Family::Nemotron => &["nemotron-", "llama-"],
        Family::SeedOss => &["seed-oss-", "seed"],
        Family::Step => &["step-", "step"],
        Family::Lfm => &["lfm", "lfm-"],
        Family::Olmo => &["olmo-", "olmo"],
    };
    for key in keys {
        let mut from = 0;
        while let Some(p) = lower[from..].find(key) {
            let start = from + p + key.len();
            let rest = &lower[start..];
            let rest = rest.strip_prefix('v').unwrap_or(rest);
            let v: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == 'o')
                .collect::<String>()
                .trim_end_matches('.')
                .to_owned();
            if v.starts_with(|c: char| c.is_ascii_digit()) {
                // A size (`Llama-70B`) is not a version.
                let after = rest[v.len()..].chars().next();
                if !matches!(after, Some('b' | 'm')) || v.contains('.') && after != Some('b') {
                    let v = v.trim_end_matches('o').to_owned();
                    let v = if lower[start..].starts_with('v') {
                        format!("v{v}")
                    } else {
                        v
                    };
                    let v = if family == Family::Gpt
                        && rest[..].starts_with(&format!("{}o", v.trim_start_matches('v')))
                    {
                        format!("{v}o")
                    } else {
                        v
                    };
                    return Some(v);
                }
            }
            from = start;
        }
    }
    None
}

impl ModelSpec {
    /// Parses a model id. Never fails: an unrecognised id has
    /// [`Family::Unknown`].
    pub fn parse(id: &str) -> ModelSpec {
        let clean = clean_id(id);
        let provider = clean.provider;
        let org = clean.org.map(str::to_owned);
        let name = clean.name.to_owned();
        let tag = clean.tag;
        let c = compact(&name);
        let rule = RULES
            .iter()
            .find(|r| r.any.iter().any(|p| c.contains(p)) && !r.none.iter().any(|p| c.contains(p)));
        let lname = name.to_ascii_lowercase();
        let o_series = lname.len() >= 2
            && lname.as_bytes()[0] == b'o'
            && lname.as_bytes()[1].is_ascii_digit()
            && lname.as_bytes().get(2).is_none_or(|&b| b == b'-');
        let family = match rule {
            Some(r) => r.family,
            None if o_series => Family::Gpt,
            None => Family::Unknown,
        };
        let version = find_version(&name, family);
        let size = find_size(&name).or_else(|| tag.as_deref().and_then(find_size));
        let org_known = org
            .as_deref()
            .is_none_or(|o| KNOWN_ORGS.contains(&o.to_ascii_lowercase().as_str()));
        let custom = family != Family::Unknown
            && (!org_known || CUSTOM_MARKS.iter().any(|m| lname.contains(m)));
        ModelSpec {
            id: id.to_owned(),
            provider,
            org,
            name,
            family,
            version,
            size,
            tag,
            custom,
            quantization: clean.quant,
        }
    }

    /// Whether the family's own chat templates have a system role. Gemma 1–3
    /// have none: Gemma 3's template folds a system message into the first
    /// user turn, Gemma 2's rejects it, and some servers' hand-written
    /// `gemma` formats (llama-cpp-python's) drop it. Every other family
    /// (and an unknown one) is taken to keep it.
    ///
    /// ```
    /// use toolstream::model::ModelSpec;
    /// assert!(!ModelSpec::parse("google/gemma-3-270m-it").system_role());
    /// assert!(!ModelSpec::parse("gemma-3-270m-q4_k_m.gguf").system_role());
    /// assert!(ModelSpec::parse("google/gemma-4-31b-it").system_role());
    /// assert!(ModelSpec::parse("SmolLM2-135M-Instruct").system_role());
    /// ```
    pub fn system_role(&self) -> bool {
        match self.family {
            Family::Gemma => self
                .version
                .as_deref()
                .and_then(|v| v.split('.').next())
                .and_then(|v| v.parse::<u32>().ok())
                .is_some_and(|major| major >= 4),
            _ => true,
        }
    }

    fn rule(&self) -> Option<&'static Rule> {
        let c = compact(&self.name);
        RULES
            .iter()
            .find(|r| r.any.iter().any(|p| c.contains(p)) && !r.none.iter().any(|p| c.contains(p)))
    }
}

impl FromStr for ModelSpec {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ModelSpec::parse(s))
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.family)?;
        if let Some(v) = &self.version {
            write!(f, " {v}")?;
        }
        if let Some(s) = &self.size {
            write!(f, " {s}")?;
        }
        if self.custom {
            f.write_str(" (custom)")?;
        }
        Ok(())
    }
}

/// What to expect from a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRoute {
    /// The parsed id.
    pub spec: ModelSpec,
    /// The dialects to recognise; empty means auto-detection.
    pub dialects: Vec<Dialect>,
    /// The family's dialects (kept for custom models, which use auto-detection).
    pub preferred: Vec<Dialect>,
    /// The table's dialect names, including any this build does not know.
    pub dialect_names: &'static [&'static str],
    /// The reasoning convention.
    pub reasoning: Reasoning,
    /// What the family's chat template usually leaves open at the end of
    /// the prompt (`<think>\n` for DeepSeek-R1, `<|start|>assistant` for
    /// gpt-oss, whose output then starts mid-header). Advisory: templates vary,
    /// and a wrong prefill turns all output into reasoning, so
    /// [`Config::for_model`] does not apply it.
    pub prefill: Option<&'static str>,
    /// The family writes real calls inside its reasoning block (Qwen 3.5+
    /// with an unclosed `<think>`, DeepSeek's DSML generation): they are
    /// extracted ([`Config::calls_in_reasoning`]). Other families' calls
    /// in reasoning stay thinking.
    pub calls_in_reasoning: bool,
}

impl ModelRoute {
    /// True when the route relies on auto-detection.
    pub fn is_auto(&self) -> bool {
        self.dialects.is_empty()
    }
}

/// Routes a model id to its dialects and reasoning convention.
///
/// ```
/// use toolstream::{model, Dialect};
/// let r = model::route("openai/gpt-oss-20b");
/// assert_eq!(r.dialects[0], Dialect::Harmony);
/// // The forms any model writes when prompted follow the family's own.
/// assert!(r.dialects.contains(&Dialect::Json));
/// let r = model::route("mycompany/llama3-ft");
/// assert!(r.is_auto() && r.spec.custom);
/// assert_eq!(r.preferred[0], Dialect::Llama3Json);
/// ```
pub fn route(id: &str) -> ModelRoute {
    let spec = ModelSpec::parse(id);
    let rule = spec.rule();
    let names: &'static [&'static str] = rule.map_or(&[], |r| r.dialects);
    let mut known: Vec<Dialect> = Vec::new();
    for d in names.iter().filter_map(|n| Dialect::from_name(n).ok()) {
        if !known.contains(&d) {
            known.push(d);
        }
    }
    // A family with native forms may write those of its other generations
    // (an id such as `deepseek-chat` does not say which one it is), and
    // writes what it is prompted to write: those come after its own, never
    // instead of them.
    if !known.is_empty() {
        let family = rule.map(|r| r.family);
        for other in RULES.iter().filter(|o| Some(o.family) == family) {
            for d in other
                .dialects
                .iter()
                .filter_map(|n| Dialect::from_name(n).ok())
            {
                if !known.contains(&d) {
                    known.push(d);
                }
            }
        }
        for d in PROMPTED {
            if !known.contains(d) {
                known.push(*d);
            }
        }
    }
    let reasoning = rule.map_or(Reasoning::None, |r| r.reasoning);
    let prefill = rule.and_then(|r| r.prefill);
    let calls_in_reasoning = rule.is_some_and(|r| r.calls_in_reasoning);
    let dialects = if spec.custom {
        Vec::new()
    } else {
        known.clone()
    };
    ModelRoute {
        spec,
        dialects,
        preferred: known,
        dialect_names: names,
        reasoning,
        prefill,
        calls_in_reasoning,
    }
}

impl Dialect {
    /// The dialects (and reasoning convention) to expect from a model; see
    /// [`crate::model`].
    pub fn for_model(id: &str) -> ModelRoute {
        route(id)
    }
}

impl Config {
    /// A configuration for a model: its dialects (auto-detection for
    /// unknown and custom models). See [`crate::model`].
    ///
    /// ```
    /// use toolstream::{Config, Dialect};
    /// let c = Config::for_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506");
    /// assert_eq!(c.dialects[0], Dialect::Mistral);
    /// assert!(Config::for_model("claude-3.5-sonnet").dialects.is_empty());
    /// ```
    pub fn for_model(id: &str) -> Config {
        let r = route(id);
        Config::default()
            .with_calls_in_reasoning(r.calls_in_reasoning)
            .with_dialects(r.dialects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(
        id: &str,
    ) -> (
        Option<String>,
        Option<String>,
        Family,
        Option<String>,
        Option<String>,
        bool,
    ) {
        let m = ModelSpec::parse(id);
        (m.provider, m.org, m.family, m.version, m.size, m.custom)
    }

    fn s(x: &str) -> Option<String> {
        Some(x.to_owned())
    }

    #[test]
    fn parses_ids() {
        assert_eq!(
            spec("gpt-4o"),
            (None, None, Family::Gpt, s("4o"), None, false)
        );
        assert_eq!(
            spec("claude-3.5-sonnet"),
            (None, None, Family::Claude, s("3.5"), None, false)
        );
        assert_eq!(
            spec("llama3.3:70b"),
            (None, None, Family::Llama, s("3.3"), s("70b"), false)
        );
        assert_eq!(
            spec("meta-llama/Llama-3.3-70B-Instruct"),
            (
                None,
                s("meta-llama"),
                Family::Llama,
                s("3.3"),
                s("70b"),
                false
            )
        );
        assert_eq!(
            spec("ollama/qwen3:32b"),
            (s("ollama"), None, Family::Qwen, s("3"), s("32b"), false)
        );
        assert_eq!(
            spec("mycompany/llama3-ft"),
            (None, s("mycompany"), Family::Llama, s("3"), None, true)
        );
        assert_eq!(
            spec("Qwen/Qwen3-Coder-30B-A3B-Instruct"),
            (
                None,
                s("Qwen"),
                Family::QwenCoder,
                s("3"),
                s("30b-a3b"),
                false
            )
        );
        assert_eq!(
            spec("deepseek-ai/DeepSeek-V3.1"),
            (
                None,
                s("deepseek-ai"),
                Family::DeepSeek,
                s("v3.1"),
                None,
                false
            )
        );
        assert_eq!(
            spec("openai/gpt-oss-20b"),
            (None, s("openai"), Family::GptOss, None, s("20b"), false)
        );
        assert_eq!(
            spec("moonshotai/Kimi-K2-Instruct"),
            (None, s("moonshotai"), Family::Kimi, None, None, false)
        );
        assert_eq!(
            spec("zai-org/GLM-4.5"),
            (None, s("zai-org"), Family::Glm, s("4.5"), None, false)
        );
        assert_eq!(
            spec("mistralai/Mistral-Small-3.2-24B-Instruct-2506"),
            (
                None,
                s("mistralai"),
                Family::Mistral,
                s("3.2"),
                s("24b"),
                false
            )
        );
        assert_eq!(spec("openrouter/google/gemma-4-e4b-it").2, Family::Gemma);
        assert_eq!(spec("openrouter/google/gemma-4-e4b-it").4, s("e4b"));
        assert_eq!(spec("mistralai/Mixtral-8x7B-Instruct-v0.1").4, s("8x7b"));
        assert_eq!(spec("THUDM/glm-4-9b-chat").2, Family::ChatGlm);
        assert!(!spec("bartowski/Llama-3.2-3B-Instruct-GGUF").5);
        assert_eq!(spec("totally-new-model").2, Family::Unknown);
    }

    #[test]
    fn every_family_routes() {
        let cases: &[(&str, Family)] = &[
            ("ibm-granite/granite-3.0-8b-instruct", Family::Granite),
            ("ibm-granite/granite-20b-functioncalling", Family::Granite),
            ("microsoft/Phi-4-mini-instruct", Family::Phi),
            ("CohereForAI/c4ai-command-r7b-12-2024", Family::Cohere),
            ("CohereForAI/c4ai-command-r-plus", Family::Cohere),
            ("meetkai/functionary-medium-v3.1", Family::Functionary),
            ("Salesforce/xLAM-7b-fc-r", Family::Xlam),
            ("Team-ACE/ToolACE-8B", Family::ToolAce),
            ("internlm/internlm2_5-7b-chat", Family::InternLm),
            ("ai21labs/AI21-Jamba-1.5-Mini", Family::Jamba),
            ("tencent/Hunyuan-A13B-Instruct", Family::Hunyuan),
            ("nvidia/Llama-3.3-Nemotron-Super-49B-v1", Family::Nemotron),
            ("ByteDance-Seed/Seed-OSS-36B-Instruct", Family::SeedOss),
            ("stepfun-ai/step3", Family::Step),
            ("LiquidAI/LFM2-1.2B", Family::Lfm),
            ("allenai/Olmo-3-7B-Instruct", Family::Olmo),
            ("google/functiongemma-270m-it", Family::FunctionGemma),
            ("google/gemma-3-27b-it", Family::Gemma),
            ("MiniMaxAI/MiniMax-M2", Family::MiniMax),
            ("NousResearch/Hermes-2-Pro-Llama-3-8B", Family::Hermes),
            ("deepseek-ai/DeepSeek-R1-0528", Family::DeepSeek),
            ("Qwen/QwQ-32B", Family::Qwen),
            ("gemini-2.5-pro", Family::Gemini),
            ("o3-mini", Family::Gpt),
        ];
        for (id, fam) in cases {
            assert_eq!(ModelSpec::parse(id).family, *fam, "{id}");
        }
    }

    #[test]
    fn system_role_by_family() {
        for id in [
            "gemma-3-270m-it",
            "google/gemma-2-9b-it",
            "ollama/gemma3:1b",
            "hf.co/unsloth/gemma-3-4b-it-GGUF:Q4_K_M",
            "gemma-7b-it",
        ] {
            assert!(!ModelSpec::parse(id).system_role(), "{id}");
        }
        for id in [
            "google/gemma-4-e4b-it",
            "google/functiongemma-270m-it",
            "SmolLM2-135M-Instruct",
            "Qwen/Qwen2.5-7B-Instruct",
            "some-unknown-model",
        ] {
            assert!(ModelSpec::parse(id).system_role(), "{id}");
        }
    }

    #[test]
    fn routes() {
        // The family's own forms, which come first (the prompted forms
        // follow them).
        let d = |id: &str| {
            let r = route(id);
            let own = r
                .dialect_names
                .iter()
                .filter(|n| Dialect::from_name(n).is_ok())
                .count();
            if !r.is_auto() {
                for p in PROMPTED {
                    assert!(r.dialects.contains(p), "{id}: {p} is missing");
                }
            }
            r.dialects[..own.min(r.dialects.len())].to_vec()
        };
        assert_eq!(d("openai/gpt-oss-20b"), vec![Dialect::Harmony]);
        assert_eq!(
            d("meta-llama/Llama-3.3-70B-Instruct"),
            vec![Dialect::Llama3Json]
        );
        assert_eq!(
            d("meta-llama/Llama-4-Scout-17B-16E-Instruct"),
            vec![Dialect::Pythonic, Dialect::Llama3Json]
        );
        assert_eq!(
            d("ollama/qwen3:32b"),
            vec![Dialect::Hermes, Dialect::Qwen3Coder]
        );
        assert_eq!(d("deepseek-ai/DeepSeek-V3.1"), vec![Dialect::DeepSeek]);
        assert_eq!(d("moonshotai/Kimi-K2-Instruct"), vec![Dialect::KimiK2]);
        assert_eq!(
            d("mistralai/Mistral-Small-3.2-24B-Instruct-2506"),
            vec![Dialect::Mistral]
        );
        assert_eq!(d("google/gemma-4-31b-it"), vec![Dialect::Gemma4]);
        assert_eq!(
            d("ibm-granite/granite-3.0-8b-instruct"),
            vec![Dialect::Granite]
        );
        assert_eq!(d("microsoft/Phi-4-mini-instruct"), vec![Dialect::Phi4Mini]);
        assert_eq!(
            d("CohereForAI/c4ai-command-r7b-12-2024"),
            vec![Dialect::Cohere]
        );
        assert_eq!(d("THUDM/glm-4-9b-chat"), vec![Dialect::ChatGlm]);
        assert_eq!(d("LiquidAI/LFM2-1.2B"), vec![Dialect::Lfm2]);
        assert_eq!(d("allenai/Olmo-3-7B-Instruct"), vec![Dialect::Olmo3]);
        assert_eq!(d("internlm/internlm2_5-7b-chat"), vec![Dialect::InternLm]);
        assert_eq!(
            d("nvidia/Llama-3.3-Nemotron-Super-49B-v1"),
            vec![Dialect::Nemotron, Dialect::Llama3Json]
        );
        assert_eq!(
            d("meetkai/functionary-small-v3.2"),
            vec![Dialect::Functionary, Dialect::Llama3Json]
        );
        assert_eq!(d("Salesforce/xLAM-7b-fc-r"), vec![Dialect::Json]);
        assert_eq!(
            d("google/functiongemma-270m-it"),
            vec![Dialect::FunctionGemma]
        );
        assert_eq!(d("gpt-4o"), Vec::<Dialect>::new());
        assert_eq!(d("claude-3.5-sonnet"), Vec::<Dialect>::new());
        assert_eq!(d("something-unheard-of"), Vec::<Dialect>::new());
        let r = route("mycompany/llama3-ft");
        assert!(r.is_auto());
        assert_eq!(r.preferred[0], Dialect::Llama3Json);
        assert_eq!(
            route("magistral-small-2509").reasoning,
            Reasoning::BracketThink
        );
        assert_eq!(route("deepseek-ai/DeepSeek-R1").prefill, Some("<think>\n"));
        assert_eq!(route("openai/gpt-oss-120b").reasoning, Reasoning::Harmony);
        assert_eq!(
            Config::for_model("openai/gpt-oss-120b").dialects[0],
            Dialect::Harmony
        );
    }

    /// The XML family's dialects are routed by name; these are the names the
    /// table expects `Dialect::from_name` to resolve once they exist.
    #[test]
    fn xml_family_names() {
        let mut expected: Vec<&str> = Vec::new();
        for id in [
            "Qwen/Qwen3-Coder-30B-A3B-Instruct",
            "zai-org/GLM-4.5",
            "zai-org/GLM-4.7",
            "MiniMaxAI/MiniMax-M2",
            "ByteDance-Seed/Seed-OSS-36B-Instruct",
            "deepseek-ai/DeepSeek-V3.2",
            "stepfun-ai/step3",
        ] {
            let r = route(id);
            assert!(!r.dialect_names.is_empty(), "{id}");
            expected.push(r.dialect_names[0]);
            // Names this build knows resolve; the others are skipped.
            for n in r.dialect_names {
                if let Ok(d) = Dialect::from_name(n) {
                    assert!(r.preferred.contains(&d));
                }
            }
        }
        assert_eq!(expected, XML_DIALECT_NAMES);
        // Qwen 3.5+ ids route to the Qwen3-Coder XML form first.
        for id in [
            "Qwen/Qwen3.5-397B-A17B",
            "qwen3.5:35b",
            "Qwen/Qwen3.6-35B-A3B",
            "openrouter/qwen/qwen3-coder",
        ] {
            assert_eq!(route(id).dialects[0], Dialect::Qwen3Coder, "{id}");
        }
    }
}
