//! Dialects: the in-band syntaxes models use to write tool calls.
//!
//! Each dialect contributes `Trigger`s — byte patterns in text where a call
//! (or a reasoning block) may begin — and the `Block` parser that takes over
//! from there. The [`crate::Parser`] scans text for the triggers of all active
//! dialects at once, so with auto-detection (the default) a model may switch
//! dialects mid-stream.
//!
//! A block starts out *speculative*: its events and raw bytes are held until
//! it commits (it has seen enough to know it is a call). A block
//! that turns out not to be a call *rejects*, and its bytes become text. Every
//! decision is made at a fixed byte of the input, so the outcome never depends
//! on how the input was chunked.
//!
//! # The XML dialects
//!
//! [`Dialect::Qwen3Coder`], [`Dialect::SeedOss`], [`Dialect::XmlEmulation`],
//! [`Dialect::Glm`], [`Dialect::MiniMaxM2`], [`Dialect::DeepSeekDsml`],
//! [`Dialect::Step3`] and [`Dialect::MorphXml`] write argument values as raw
//! text between tags. One streaming engine reads them all (its tag lexer is
//! [`crate::xml`]) and writes the arguments JSON `{"k": v, …}` itself.
//!
//! **Streaming.** A string value is emitted as JSON-escaped
//! [`crate::Event::ToolArgs`] deltas as it arrives (`{"location": "Hang` …
//! `zhou"`). Only bytes that may still be markup are held back: a `<` that can
//! become one of the dialect's own tags (until it cannot), the blanks and tag
//! after a closing tag (to decide whether it closes), a trailing newline the
//! dialect strips, a partial `&…;` when decoding, a split UTF-8 character.
//!
//! **Delimiters inside values.** A value's closing tag (`</parameter>`,
//! `</arg_value>`, `</k>`) closes it only when what follows, after blanks, is
//! markup that may come next: another parameter (declared by the tool's
//! schema, when known), the invoke's or container's closing tag, the next call,
//! or the end of the input. Otherwise it is content, so a file body holding
//! `</parameter>` survives, and the call records that reading
//! ([`crate::RepairKind::CloseTagInValue`]). A missing closing tag is inferred
//! ([`crate::RepairKind::MissingCloseTag`]) before: a new parameter the schema
//! declares and the call has not had (without a schema: one the call has not
//! had, on a new line); the invoke's closing tag followed by the container's
//! close, the next call or the end (a bare Qwen3-Coder `</function>`, which
//! has no container, whatever follows); the container's closing tag followed
//! by the next call or the end. A `<tool_call>` / invoke opened inside a value is
//! a nested example up to its matching close. CDATA is content. Entities stay
//! literal unless [`crate::Config::decode_entities`] is set.
//!
//! **Whitespace.** Qwen3-Coder and Seed-OSS drop exactly one leading and one
//! trailing newline of a value; MiniMax and the XML emulations trim
//! surrounding whitespace; GLM, DSML and Step-3 keep values exactly.
//!
//! **Typing.** With the tool's schema ([`crate::Config::tools`]): `string`
//! stays a string even when it looks like a number; `integer` / `number` /
//! `boolean` / `null` are coerced (`"20"` or `20.0` → `20`, `True` → `true`);
//! `object` / `array` values are streamed through the JSON repairer. DSML's
//! `string="true"` is a string, `string="false"` JSON. Without a schema, a
//! value that is entirely a JSON number, literal, object or array is that,
//! anything else a string. A value that may still become a number cannot be
//! streamed as a string before that is known, so it is held: a scalar-typed
//! one up to 64 bytes, an untyped one while it is still strict JSON (at most
//! [`crate::Limits::max_token_bytes`], after which it is committed to JSON and
//! streamed); the first byte that shows it is not JSON starts streaming it as
//! a string. Conversions that change what the model wrote are recorded as
//! [`crate::RepairKind::TypeCoercion`].
//!
//! **Failures.** A block that turns out not to be a call is text, with a
//! [`crate::DiagnosticKind::UnparseableBlock`] diagnostic when its opening tag
//! was the dialect's own, and parsing resumes after it. A call cut off by the
//! end of the input ends with `truncated: true`; one cut by
//! [`crate::Limits::max_args_bytes`] at that exact input byte.
//! # Auto-detection
//!
//! With no dialect configured (the default, `--dialect auto`) the triggers
//! of every dialect are active, and the model may switch dialects mid-stream.
//! Where several triggers could start at the same byte, the strongest
//! evidence wins: literal special tokens and tags first (longest first, so
//! `<tool_calls>` beats `<tool_call`), then tag shapes read by matchers
//! (Harmony headers, `<function=NAME>{`, `>>>NAME`), then JSON and pythonic
//! shapes (`{`, `[{`, `[name(`, a line starting with `name(`), which commit
//! only on further evidence. A trigger that could still match when a chunk
//! ends holds those bytes back until it is decided.

use crate::arena::Arena;
use crate::config::Config;
use crate::error::UnknownDialect;
use crate::event::{CompactString, DiagnosticKind, Event, Repair, Span, ToolCall};
use crate::scan::Pattern;

pub(crate) mod args;
pub(crate) mod chatglm;
pub(crate) mod cohere;
pub(crate) mod deepseek;
pub(crate) mod fastcall;
pub(crate) mod functionary;
pub(crate) mod gemma;
pub(crate) mod granite;
pub(crate) mod harmony;
pub(crate) mod hermes;
pub(crate) mod internlm;
pub(crate) mod json;
pub(crate) mod kimi;
pub(crate) mod kimi_k3;
pub(crate) mod lfm2;
pub(crate) mod llama;
pub(crate) mod mistral;
pub(crate) mod nemotron;
pub(crate) mod olmo3;
pub(crate) mod phi4;
pub(crate) mod pythonic;
pub(crate) mod pyvalue;
pub(crate) mod reasoning;
// XML family.
pub(crate) mod dsml;
pub(crate) mod glm;
pub(crate) mod minimax;
pub(crate) mod morph_xml;
pub(crate) mod qwen3_coder;
pub(crate) mod sectioned;
pub(crate) mod seed_oss;
pub(crate) mod step3;
pub(crate) mod wrap;
pub(crate) mod xml_emulation;
pub(crate) mod xmlcalls;

#[cfg(test)]
thread_local! {
    /// See [`fast_calls_taken`].
    static FAST_TAKEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many call objects the fast path ([`fastcall`]) has read on this
/// thread (unit tests that must see it taken).
#[cfg(test)]
pub(crate) fn fast_calls_taken() -> u64 {
    FAST_TAKEN.with(std::cell::Cell::get)
}

/// Counts one call read by the fast path (unit tests only).
#[inline]
pub(crate) fn fast_call_taken() {
    #[cfg(test)]
    FAST_TAKEN.with(|t| t.set(t.get() + 1));
}

/// A tool-call dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Generic JSON emulation (also xLAM's `{"tool_calls": […]}` and TGI's
    /// `{"function": {"_name": …}}`): a bare object or array of calls, fenced
    /// (```` ```json ````, ```` ``` ````, ```` ```tool_call ````) or not, under any of the
    /// usual name and argument keys.
    Json,
    /// Hermes / Qwen2.5 / Qwen3 `<tool_call>{…}</tool_call>` and the tag
    /// variants `<tool_use>`, `<function_call>`, `<tools>`, `<tool_calls>`.
    Hermes,
    // --- XML family -------------------------------------------------------
    /// Qwen3-Coder / Qwen3.5+ XML: `<tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>`,
    /// also without the `<tool_call>` wrapper.
    Qwen3Coder,
    /// ByteDance Seed-OSS: Qwen3-Coder's syntax in `<seed:tool_call>`.
    SeedOss,
    /// Plain XML emulation: `<tool_call><name>NAME</name><arguments><k>v</k></arguments></tool_call>`.
    XmlEmulation,
    /// GLM-4.5 / 4.6 / 4.7 / 5: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`.
    Glm,
    /// MiniMax-M2: `<minimax:tool_call><invoke name="F"><parameter name="k">v</parameter></invoke></minimax:tool_call>`.
    MiniMaxM2,
    /// DeepSeek V3.2 / V4 DSML: `<｜DSML｜function_calls>` / `<｜DSML｜tool_calls>` with `<｜DSML｜invoke>`.
    DeepSeekDsml,
    /// StepFun Step-3: `<｜tool_calls_begin｜>…<steptml:invoke name="F">…`.
    Step3,
    /// AI SDK morph-xml: `<TOOL_NAME><arg>v</arg></TOOL_NAME>`, only for known tools.
    MorphXml,
    // ---- special-token and pythonic dialects (branch `tokens`) ----
    /// Pythonic calls `[f(a=1), g()]` (Llama 3.2/4, BFCL, ToolACE, Gemma 3
    /// prompts), bare, fenced or after `<|python_start|>`.
    Pythonic,
    /// Llama 3.x JSON calls after `<|python_tag|>` (`{"name", "parameters"}` separated by `; `, built-in `tool.call(…)`, code), and Llama 4 `<|python_start|>…<|python_end|>`.
    Llama3Json,
    /// LFM2 `<|tool_call_start|>[pythonic]<|tool_call_end|>`.
    Lfm2,
    /// Olmo 3 `<function_calls>pythonic</function_calls>`.
    Olmo3,
    /// IBM Granite 3.0 `<|tool_call|>[…]` (3.1+ and 4 use the Hermes tag) and the `<response>` wrapper.
    Granite,
    /// Phi-4-mini `functools[{…}, …]`.
    Phi4Mini,
    /// InternLM2 / Intern-S1 `<|action_start|><|plugin|>{…}<|action_end|>`.
    InternLm,
    /// NVIDIA Nemotron `<TOOLCALL>[…]</TOOLCALL>`.
    Nemotron,
    /// Cohere Command R7B / A `<|START_ACTION|>[…]<|END_ACTION|>` and Command R's
    /// `Action:` line before a JSON code fence.
    Cohere,
    /// Mistral `[TOOL_CALLS]` (JSON array, `NAME[ARGS]{…}`, `NAME{…}`).
    Mistral,
    /// DeepSeek V3 / R1 and V3.1 `<｜tool▁calls▁begin｜>…` (full-width or ASCII bars).
    DeepSeek,
    /// Kimi K2 `<|tool_calls_section_begin|>…functions.NAME:IDX…` (the head is kept as the id).
    KimiK2,
    /// Kimi K3 sectioned markup: `<|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>`
    /// `<|open|>argument key="K" type="T"<|sep|>V<|close|>argument<|sep|>…`.
    KimiK3,
    /// GPT-OSS Harmony channels: `analysis` is reasoning, `final` text, `to=functions.NAME` a call.
    Harmony,
    /// Gemma 4 `<|tool_call>call:NAME{key:<|"|>str<|"|>}<tool_call|>`.
    Gemma4,
    /// FunctionGemma `<start_function_call>call:NAME{k:<escape>v<escape>}<end_function_call>`.
    FunctionGemma,
    /// Functionary v3.1 `<function=NAME>{json}</function>` and v3.2 `>>>NAME⏎{json}`.
    Functionary,
    /// GLM-4 (9B chat) `NAME⏎{json}`.
    ChatGlm,
    // ---- end of the `tokens` block ----
}

impl Dialect {
    /// Every dialect.
    pub const ALL: &'static [Dialect] = &[
        Dialect::Json,
        Dialect::Hermes,
        // XML family.
        Dialect::Qwen3Coder,
        Dialect::SeedOss,
        Dialect::XmlEmulation,
        Dialect::Glm,
        Dialect::MiniMaxM2,
        Dialect::DeepSeekDsml,
        Dialect::Step3,
        Dialect::MorphXml,
        // ---- tokens ----
        Dialect::Pythonic,
        Dialect::Llama3Json,
        Dialect::Lfm2,
        Dialect::Olmo3,
        Dialect::Granite,
        Dialect::Phi4Mini,
        Dialect::InternLm,
        Dialect::Nemotron,
        Dialect::Cohere,
        Dialect::Mistral,
        Dialect::DeepSeek,
        Dialect::KimiK2,
        Dialect::KimiK3,
        Dialect::Harmony,
        Dialect::Gemma4,
        Dialect::FunctionGemma,
        Dialect::Functionary,
        Dialect::ChatGlm,
        // ---- end tokens ----
    ];

    /// The dialect's CLI name.
    pub const fn name(self) -> &'static str {
        match self {
            Dialect::Json => "json",
            Dialect::Hermes => "hermes",
            // XML family.
            Dialect::Qwen3Coder => "qwen3_coder",
            Dialect::SeedOss => "seed_oss",
            Dialect::XmlEmulation => "xml",
            Dialect::Glm => "glm",
            Dialect::MiniMaxM2 => "minimax_m2",
            Dialect::DeepSeekDsml => "deepseek_dsml",
            Dialect::Step3 => "step3",
            Dialect::MorphXml => "morph_xml",
            // ---- tokens ----
            Dialect::Pythonic => "pythonic",
            Dialect::Llama3Json => "llama3_json",
            Dialect::Lfm2 => "lfm2",
            Dialect::Olmo3 => "olmo3",
            Dialect::Granite => "granite",
            Dialect::Phi4Mini => "phi4_mini",
            Dialect::InternLm => "internlm",
            Dialect::Nemotron => "nemotron",
            Dialect::Cohere => "cohere",
            Dialect::Mistral => "mistral",
            Dialect::DeepSeek => "deepseek",
            Dialect::KimiK2 => "kimi_k2",
            Dialect::KimiK3 => "kimi_k3",
            Dialect::Harmony => "harmony",
            Dialect::Gemma4 => "gemma4",
            Dialect::FunctionGemma => "functiongemma",
            Dialect::Functionary => "functionary",
            Dialect::ChatGlm => "chatglm",
            // ---- end tokens ----
        }
    }

    /// Looks a dialect up by its CLI name (case-insensitive; `-` and `_` are the same).
    pub fn from_name(name: &str) -> Result<Dialect, UnknownDialect> {
        let norm = name.trim().to_ascii_lowercase().replace('-', "_");
        Dialect::ALL
            .iter()
            .copied()
            .find(|d| d.name() == norm)
            .or(match norm.as_str() {
                "qwen" | "qwen25" | "qwen2_5" | "nous" | "hermes2" => Some(Dialect::Hermes),
                "json_bare" | "json_fenced" | "generic" | "emulation" => Some(Dialect::Json),
                // XML family.
                "qwen3_xml" | "qwen3coder" | "qwen35" | "qwen3_5" | "qwen3.5" | "qwen3_6"
                | "step3p5" | "nemotron_nano" => Some(Dialect::Qwen3Coder),
                "seed" | "seedoss" => Some(Dialect::SeedOss),
                "xml_emulation" | "plain_xml" | "xml_generic" => Some(Dialect::XmlEmulation),
                "glm45" | "glm4_5" | "glm46" | "glm4_6" | "glm47" | "glm4_7" | "glm5"
                | "glm4_moe" => Some(Dialect::Glm),
                "minimax" | "minimax_m2_1" | "minimax_m2_5" | "minimax_m2_7" | "minimax_m2.5" => {
                    Some(Dialect::MiniMaxM2)
                }
                "dsml" | "deepseek_v32" | "deepseekv32" | "deepseek_v3_2" | "deepseek_v4"
                | "deepseekv4" => Some(Dialect::DeepSeekDsml),
                "steptml" | "step_3" => Some(Dialect::Step3),
                "morphxml" | "morph" => Some(Dialect::MorphXml),
                // ---- tokens ----
                "xlam" | "tgi" => Some(Dialect::Json),
                "granite_20b_fc" | "granite4" | "jamba" | "hunyuan" | "hunyuan_a13b"
                | "minimax_m1" => Some(Dialect::Hermes),
                "llama4_pythonic" | "bfcl" | "toolace" | "gemma3" | "tool_code" => {
                    Some(Dialect::Pythonic)
                }
                "llama3" | "llama" | "llama4_json" | "llama3_1" | "llama3_2" | "llama3_3" => {
                    Some(Dialect::Llama3Json)
                }
                "ministral" | "magistral" | "devstral" | "mistral_v11" => Some(Dialect::Mistral),
                "deepseek_v3" | "deepseekv3" | "deepseek_v31" | "deepseekv31" | "deepseek_r1" => {
                    Some(Dialect::DeepSeek)
                }
                "kimi" | "kimi_k2_5" | "kimik2" => Some(Dialect::KimiK2),
                "kimik3" | "kimi_k3_xtml" | "k3" => Some(Dialect::KimiK3),
                "openai" | "gpt_oss" | "gptoss" | "openai_gptoss" => Some(Dialect::Harmony),
                "granite3" | "granite_3" => Some(Dialect::Granite),
                "phi4_mini_json" | "phi4" | "phi_4_mini" => Some(Dialect::Phi4Mini),
                "gemma" | "gemma_4" => Some(Dialect::Gemma4),
                "function_gemma" => Some(Dialect::FunctionGemma),
                "cohere_command3" | "cohere_command4" | "command_r" | "command_a"
                | "command_r7b" => Some(Dialect::Cohere),
                "functionary_v3_1" | "functionary_v3_2" | "meetkai" => Some(Dialect::Functionary),
                "internlm2" | "interns1" | "intern_s1" => Some(Dialect::InternLm),
                "nemotron_deci" | "toolcall" => Some(Dialect::Nemotron),
                "liquid" | "lfm" => Some(Dialect::Lfm2),
                "olmo" | "olmo_3" => Some(Dialect::Olmo3),
                "glm4" | "glm4_9b" => Some(Dialect::ChatGlm),
                // ---- end tokens ----
                _ => None,
            })
            .ok_or_else(|| UnknownDialect(name.to_owned()))
    }

    pub(crate) fn triggers(self) -> &'static [Trigger] {
        match self {
            Dialect::Json => json::TRIGGERS,
            Dialect::Hermes => hermes::TRIGGERS,
            // XML family.
            Dialect::Qwen3Coder => qwen3_coder::TRIGGERS,
            Dialect::SeedOss => seed_oss::TRIGGERS,
            Dialect::XmlEmulation => xml_emulation::TRIGGERS,
            Dialect::Glm => glm::TRIGGERS,
            Dialect::MiniMaxM2 => minimax::TRIGGERS,
            Dialect::DeepSeekDsml => dsml::TRIGGERS,
            Dialect::Step3 => step3::TRIGGERS,
            Dialect::MorphXml => morph_xml::TRIGGERS,
            // ---- tokens ----
            Dialect::Pythonic => pythonic::TRIGGERS,
            Dialect::Llama3Json => llama::TRIGGERS,
            Dialect::Lfm2 => lfm2::TRIGGERS,
            Dialect::Olmo3 => olmo3::TRIGGERS,
            Dialect::Granite => granite::TRIGGERS,
            Dialect::Phi4Mini => phi4::TRIGGERS,
            Dialect::InternLm => internlm::TRIGGERS,
            Dialect::Nemotron => nemotron::TRIGGERS,
            Dialect::Cohere => cohere::TRIGGERS,
            Dialect::Mistral => mistral::TRIGGERS,
            Dialect::DeepSeek => deepseek::TRIGGERS,
            Dialect::KimiK2 => kimi::TRIGGERS,
            Dialect::KimiK3 => kimi_k3::TRIGGERS,
            Dialect::Harmony => harmony::TRIGGERS,
            Dialect::Gemma4 => gemma::GEMMA4_TRIGGERS,
            Dialect::FunctionGemma => gemma::FUNCTIONGEMMA_TRIGGERS,
            Dialect::Functionary => functionary::TRIGGERS,
            Dialect::ChatGlm => chatglm::TRIGGERS,
            // ---- end tokens ----
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Dialect {
    type Err = UnknownDialect;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::from_name(s)
    }
}

/// Where a block can begin, and what takes over there.
#[derive(Clone, Copy)]
pub(crate) struct Trigger {
    pub pattern: Pattern,
    pub action: Action,
}

/// What a trigger starts.
#[derive(Clone, Copy)]
pub(crate) enum Action {
    /// A reasoning block that ends at `close`.
    Reasoning { close: &'static [u8] },
    /// Markup that frames text (an end-of-turn token, a response wrapper):
    /// reported as [`Event::Markup`], then text goes on.
    Markup,
    /// A call's closing tag written once more, or for a call written without
    /// its opening tag (`…</tool_call>\n</tool_call>`, `{"name": …}\n</tool_call>`):
    /// markup, as [`Action::Markup`], where only blanks lie between it and the
    /// end of the last call; anywhere else it is no trigger (text).
    Closer,
    /// A block parser. With `consume`, the trigger bytes are markup the block
    /// does not see; otherwise the block reads them itself.
    Block {
        open: fn(&BlockArgs<'_>) -> Box<dyn Block>,
        consume: bool,
    },
}

/// What a block is opened with.
pub(crate) struct BlockArgs<'a> {
    /// The bytes of the trigger that matched.
    pub trigger: &'a [u8],
    /// The parser's configuration.
    pub cfg: &'a Config,
    /// What earlier blocks left to reuse.
    pub spares: &'a Spares,
}

/// Readers that ended, kept emptied for the next block of the stream to
/// reuse their buffers: a reply of a few kilobytes holds dozens of short
/// blocks, each of which would otherwise allocate them anew. Only buffers
/// pass from one reader to the next, never state (see
/// [`json::JsonCalls::reusing`]).
#[derive(Default)]
pub(crate) struct Spares {
    json: std::cell::Cell<Option<json::JsonCalls>>,
    /// The last tag block's box ([`hermes::TagBlock`]): a reply of many
    /// short calls opens one per call.
    tag: std::cell::Cell<Option<Box<hermes::TagBlock>>>,
}

impl Spares {
    /// Keeps a tag block's box for the next tag block to reuse.
    pub(crate) fn put_tag(&self, block: Box<hermes::TagBlock>) {
        self.tag.set(Some(block));
    }

    /// The box kept by [`Spares::put_tag`], if any.
    pub(crate) fn take_tag(&self) -> Option<Box<hermes::TagBlock>> {
        self.tag.take()
    }

    /// Keeps `jc` for the next reader (one is kept: a block reads one
    /// value at a time).
    pub(crate) fn put_json(&self, jc: json::JsonCalls) {
        self.json.set(Some(jc));
    }

    /// The reader kept by [`Spares::put_json`], if any.
    pub(crate) fn take_json(&self) -> Option<json::JsonCalls> {
        self.json.take()
    }
}

impl std::fmt::Debug for Spares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spares(..)")
    }
}

/// What a block did with the input it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Consumed everything; the block goes on.
    More,
    /// Consumed this many bytes; the rest could not be decided yet (a partial
    /// closing tag) and must be fed again together with the next input.
    Partial(usize),
    /// The block ended after this many bytes of the input.
    Done(usize),
    /// Not a call: everything from the block's start up to `at` bytes into
    /// this input is text; parsing resumes there in `then` mode.
    Reject { at: usize, then: Resume },
}

/// The mode the parser resumes in after a rejected block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resume {
    /// Ordinary text, scanning for triggers.
    Text,
    /// Inside a code fence that is not a call: text up to the closing fence.
    FenceText,
}

/// A parser for one block (a call, or several calls in one container).
pub(crate) trait Block: Send {
    /// Consumes input; `cx.base` is the absolute offset of `input[0]`.
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow;
    /// The input ended inside the block; `cx.base` is the end of the input.
    /// A block that has not committed and cannot decide returns false (its
    /// bytes become text).
    fn finish(&mut self, cx: &mut Cx<'_>) -> bool;
    /// The JSON reader that is reading this block's input now, if the
    /// block hands it every byte as it comes: the parser may arm its lane
    /// on it between chunks (see [`crate::json::Lane`]).
    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        None
    }
    /// Takes a chunk of a committed block whole, if the block can tell at
    /// a glance that [`Block::feed`] would only write it on (plain content
    /// of a string argument): the same writes and events, without the
    /// byte-by-byte reading. False, and nothing done, otherwise (the
    /// default).
    fn plain_chunk(&mut self, _input: &[u8], _cx: &mut Cx<'_>) -> bool {
        false
    }
    /// The block is over (ended, rejected or finished): it may leave its
    /// readers to `spares` for the next block. The default drops them.
    fn recycle(self: Box<Self>, spares: &Spares) {
        let _ = spares;
    }
}

/// A JSON reader the parser's lane can take chunks over from.
pub(crate) enum LaneHost<'a> {
    /// Call envelopes ([`json::JsonCalls::lane_arm`]).
    Calls(&'a mut json::JsonCalls),
    /// The arguments of the block's call `.1` ([`args::ArgsJson::lane_arm`]).
    Args(&'a mut args::ArgsJson, usize),
}

impl LaneHost<'_> {
    /// Arms `lane` if the reader is in a state it can read on from.
    pub(crate) fn arm(self, lane: &mut crate::json::Lane, em: &Emitter) -> bool {
        match self {
            LaneHost::Calls(jc) => jc.lane_arm(lane, em),
            LaneHost::Args(a, local) => a.lane_arm(lane, em.locals[local].index),
        }
    }

    /// Gives the reader back the state of the lane's last commit point.
    pub(crate) fn disarm(self, lane: &mut crate::json::Lane) {
        match self {
            LaneHost::Calls(jc) => jc.lane_disarm(lane),
            LaneHost::Args(a, _) => a.lane_disarm(lane),
        }
    }
}

/// One call a block has started.
#[derive(Debug)]
struct Local {
    index: usize,
    id: CompactString,
    name: CompactString,
}

/// Collects the events of the current block, held until it commits.
#[derive(Debug, Default)]
pub(crate) struct Emitter {
    pub(crate) pending: Vec<Event>,
    pub(crate) committed: bool,
    pub(crate) next_index: usize,
    first_index: usize,
    locals: Vec<Local>,
    /// Where the next call's span begins.
    span_cursor: u64,
    /// Calls ended in this block.
    pub(crate) ended: usize,
    /// Where the parser left a reasoning block for a call written in it
    /// ([`Config::calls_in_reasoning`]); taken by the block that opens there.
    pub(crate) reasoning_exit: Option<u64>,
    /// The current block opened inside reasoning, at this offset: its calls
    /// carry [`crate::RepairKind::CallInReasoning`].
    in_reasoning: Option<u64>,
    /// Where `ToolArgs` deltas are copied to (see [`crate::arena`]).
    pub(crate) arena: Arena,
    /// What ended blocks left for the next ones to reuse.
    pub(crate) spares: Spares,
    /// Absolute offset of the end of the data the parser is reading, as
    /// last set by [`crate::Parser`] before feeding a block a part of it:
    /// a block may size a buffer for what is left (see
    /// [`crate::envelope::CallRouter::feed_left`]). Earlier than a feed's
    /// own input when stale: a reader takes the larger of the two.
    pub(crate) data_end: u64,
}

impl Emitter {
    pub(crate) fn begin_block(&mut self, start: u64) {
        self.pending.clear();
        self.committed = false;
        self.first_index = self.next_index;
        self.locals.clear();
        self.span_cursor = start;
        self.ended = 0;
        self.in_reasoning = self.reasoning_exit.take().filter(|&at| at == start);
    }

    /// A new stream: call indexes start again at 0 (the buffers are kept).
    pub(crate) fn reset(&mut self) {
        self.pending.clear();
        self.committed = false;
        self.next_index = 0;
        self.first_index = 0;
        self.locals.clear();
        self.span_cursor = 0;
        self.ended = 0;
        self.reasoning_exit = None;
        self.in_reasoning = None;
    }

    /// The block is not a call: its events are dropped, except diagnostics
    /// (which say why its bytes became text).
    pub(crate) fn reject(&mut self) {
        self.pending
            .retain(|e| matches!(e, Event::Diagnostic { .. }));
        self.next_index = self.first_index;
        self.locals.clear();
        self.ended = 0;
    }

    pub(crate) fn span_cursor(&self) -> u64 {
        self.span_cursor
    }
}

/// The block's handle on the parser: emits calls and diagnostics.
pub(crate) struct Cx<'a> {
    /// Absolute offset of the first byte of the input given to [`Block::feed`].
    pub base: u64,
    pub(crate) em: &'a mut Emitter,
    pub(crate) cfg: &'a Config,
}

impl Cx<'_> {
    /// The context for a sub-reader that starts at byte `i` of the current input.
    // Out of line: inlined, it lets a block copy its whole context on entry,
    // a 16-byte load of fields its caller has just stored one by one (a
    // store-forwarding stall on every chunk).
    #[inline(never)]
    pub(crate) fn at(&mut self, i: usize) -> Cx<'_> {
        Cx {
            base: self.abs(i),
            em: &mut *self.em,
            cfg: self.cfg,
        }
    }

    /// Absolute offset of byte `i` of the current input.
    #[inline]
    pub(crate) fn abs(&self, i: usize) -> u64 {
        self.base + i as u64
    }

    /// True when the tool list is known and has a tool called `name`.
    pub(crate) fn known_tool(&self, name: &str) -> bool {
        self.cfg
            .tools
            .as_ref()
            .is_some_and(|t| t.get(name).is_some())
    }

    /// The block is a call: its held events and bytes are released.
    pub(crate) fn commit(&mut self) {
        self.em.committed = true;
    }

    /// True once committed.
    pub(crate) fn committed(&self) -> bool {
        self.em.committed
    }

    /// Starts a call; returns its block-local number.
    pub(crate) fn start(
        &mut self,
        name: impl Into<CompactString>,
        model_id: Option<String>,
        span: Span,
    ) -> usize {
        let name = name.into();
        let index = self.em.next_index;
        self.em.next_index += 1;
        let id = match model_id {
            Some(id) if !id.is_empty() => CompactString::from(id),
            _ => self.cfg.ids.id(index),
        };
        self.em.pending.push(Event::ToolStart {
            index,
            id: id.clone(),
            name: name.clone(),
            span,
        });
        self.em.locals.push(Local { index, id, name });
        self.em.locals.len() - 1
    }

    /// Appends to a started call's arguments.
    pub(crate) fn args(&mut self, local: usize, delta: &[u8], span: Span) {
        if delta.is_empty() {
            return;
        }
        let index = self.em.locals[local].index;
        self.em
            .arena
            .push_args(&mut self.em.pending, index, delta, span);
    }

    /// Ends a started call; its span runs from the end of the previous call
    /// (or the block's start) to `end`.
    pub(crate) fn end(
        &mut self,
        local: usize,
        end: u64,
        arguments: String,
        mut repairs: Vec<Repair>,
        truncated: bool,
    ) {
        // A call ends once: its id and name move into the event.
        let l = &mut self.em.locals[local];
        debug_assert!(!l.id.is_empty(), "a call ended twice");
        let (index, id, name) = (
            l.index,
            std::mem::take(&mut l.id),
            std::mem::take(&mut l.name),
        );
        let start = self.em.span_cursor;
        let end = end.max(start);
        self.em.span_cursor = end;
        self.em.ended += 1;
        if let Some(at) = self.em.in_reasoning {
            repairs.insert(
                0,
                Repair {
                    offset: at,
                    kind: crate::event::RepairKind::CallInReasoning,
                },
            );
        }
        Repair::cap(&mut repairs, self.cfg.limits.max_repairs);
        self.em.pending.push(Event::ToolEnd {
            call: Box::new(ToolCall {
                index,
                id,
                name,
                arguments,
                repairs,
                truncated,
            }),
            span: Span::new(start, end),
        });
    }

    /// Reports something that did not stop parsing.
    pub(crate) fn diag(&mut self, kind: DiagnosticKind, message: impl Into<String>, span: Span) {
        self.em.pending.push(Event::Diagnostic {
            kind,
            message: message.into(),
            span,
        });
    }
}

/// True when `d` is among the configured dialects (or all are, in auto mode).
/// What the bytes at a position are, for a reader that skips blanks: a
/// blank that is not ASCII, and how long it is; no blank; or too few bytes
/// to tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blank {
    /// A Unicode blank of this many bytes.
    Yes(usize),
    /// Not a blank (or not UTF-8).
    No,
    /// The input ends inside a character that may be one.
    Partial,
}

/// Whether `bytes` start with a blank that is not ASCII: a character of
/// Unicode's `White_Space` (NBSP, U+1680, U+2000–U+200A, U+2028, U+2029,
/// U+202F, U+205F, U+3000, U+0085) or an invisible format character a model
/// writes where it means nothing (zero-width space, joiners, word joiner,
/// BOM). Readers skip these wherever they skip ASCII blanks. Asked only
/// for a byte ≥ 0x80, so ASCII input costs nothing.
pub(crate) fn unicode_blank(bytes: &[u8]) -> Blank {
    let Some(&b) = bytes.first() else {
        return Blank::No;
    };
    let len = match b {
        0xC2 => 2,
        0xE1..=0xE3 | 0xEF => 3,
        _ => return Blank::No,
    };
    if bytes.len() < len {
        // Only the prefixes of a blank are worth waiting for.
        let may = matches!(
            (b, bytes.get(1)),
            (_, None)
                | (0xE1, Some(&0x9A))
                | (0xE2, Some(&(0x80 | 0x81)))
                | (0xE3, Some(&0x80))
                | (0xEF, Some(&0xBB))
        );
        return if may { Blank::Partial } else { Blank::No };
    }
    let blank = matches!(
        (b, bytes[1], bytes.get(2).copied().unwrap_or(0)),
        (0xC2, 0x85 | 0xA0, _)
            | (0xE1, 0x9A, 0x80)
            | (0xE2, 0x80, 0x80..=0x8D | 0xA8 | 0xA9 | 0xAF)
            | (0xE2, 0x81, 0x9F | 0xA0)
            | (0xE3, 0x80, 0x80)
            | (0xEF, 0xBB, 0xBF)
    );
    if blank {
        Blank::Yes(len)
    } else {
        Blank::No
    }
}

/// Whether `bytes` start with a letter that is not ASCII (a tool name may
/// start with one): `Some(true)`, `Some(false)`, or `None` when the input
/// ends inside the character.
pub(crate) fn unicode_letter(bytes: &[u8]) -> Option<bool> {
    let len = crate::json::utf8_len(*bytes.first()?);
    if len < 2 {
        return Some(false);
    }
    if bytes.len() < len {
        // A valid start of a character: wait for the rest.
        return match std::str::from_utf8(bytes) {
            Err(e) if e.error_len().is_none() => None,
            _ => Some(false),
        };
    }
    Some(
        std::str::from_utf8(&bytes[..len])
            .ok()
            .and_then(|s| s.chars().next())
            .is_some_and(char::is_alphabetic),
    )
}

pub(crate) fn enabled(cfg: &Config, d: Dialect) -> bool {
    cfg.dialects.is_empty() || cfg.dialects.contains(&d)
}

/// The triggers of a set of dialects (empty: all), reasoning first.
pub(crate) fn triggers_for(dialects: &[Dialect]) -> Vec<Trigger> {
    let mut out: Vec<Trigger> = reasoning::TRIGGERS.to_vec();
    let set: &[Dialect] = if dialects.is_empty() {
        Dialect::ALL
    } else {
        dialects
    };
    for d in set {
        out.extend_from_slice(d.triggers());
    }
    // Longer literals first so `<tool_calls>` wins over `<tool_call` prefixes.
    // Matchers (tag shapes, then JSON and pythonic shapes, in dialect order)
    // come after every literal: the strongest evidence is tried first.
    out.sort_by_key(|t| match t.pattern {
        Pattern::Lit(l) => std::cmp::Reverse(l.len()),
        Pattern::Custom { .. } | Pattern::Line { .. } | Pattern::After { .. } => {
            std::cmp::Reverse(0)
        }
    });
    out
}

#[cfg(test)]
mod trigger_tests {
    //! Every trigger must answer the same for every longer input once it
    //! has said "yes" or "no": the parser acts on the first answer that is
    //! not [`Match::Partial`], and a later change of mind would make the
    //! result depend on where the chunks were cut (fuzz finding
    //! `content_split-15` was such a trigger).

    use super::*;
    use crate::scan::Match;
    use proptest::prelude::*;

    /// Fragments that make the matchers work: markup of every family,
    /// Harmony header words, JSON and pythonic shapes, blanks, line breaks.
    const PIECES: &[&str] = &[
        "<tool_call>",
        "</tool_call>",
        "<|channel|>",
        "<|message|>",
        "<|constrain|>",
        "<|start|>",
        "<|python_tag|>",
        "[TOOL_CALLS]",
        "<｜tool▁calls▁begin｜>",
        "<|tool_calls_section_begin|>",
        "<function=",
        "<invoke name=\"",
        "```json\n",
        "```",
        "final",
        "analysis",
        "commentary",
        "assistant",
        " to=",
        "to=",
        "functions.get_weather",
        "user",
        "json",
        "[",
        "]",
        "{",
        "}",
        "(",
        ")",
        "f(",
        "x=1",
        "\"name\"",
        ": ",
        "\"arguments\"",
        ", ",
        "'a'",
        "call:",
        "get_weather",
        ".",
        "\n",
        " ",
        "  ",
        "\t",
        "<",
        ">",
        "/",
        "|",
        "=",
        "a",
        "0",
        "\"",
        "é",
        // Blank runs at the lookahead bounds (fuzz findings `pythonic-7`,
        // `content_split-21`), and heads whose blanks are bounded.
        "                ",
        "\n               ",
        "               ",
        " ",
        "get_weather\n{",
        "<function=f>",
        "'f', ",
        "\"c\",",
        "\u{2581}",
        // #42: Kimi K3 markers, DSML's spaced marker, a prefilled header.
        "<|open|>tools<|sep|>",
        "<|open|>",
        "<|close|>",
        "<|sep|>",
        "<｜DSML｜ calls>",
        "<｜DSML｜",
        " to=functions.f",
        "  to=",
    ];

    /// Harmony-header-like lines: `[WORD][ to=][R]( WORD)*[TOKEN]`, each
    /// part possibly missing, so every header shape comes up often.
    fn header() -> impl Strategy<Value = Vec<u8>> {
        let sel = |v: &'static [&'static str]| prop::sample::select(v).prop_map(|s| s.as_bytes());
        (
            sel(&["final", "analysis", "commentary", "assistant", "to=x", ""]),
            sel(&[" to=", "to=", " ", ""]),
            sel(&["x", "functions.get_weather", "user", "us", "[", ""]),
            prop::collection::vec(
                (
                    sel(&[" ", "  ", "\t", ""]),
                    sel(&[
                        "f(X=",
                        "]",
                        "json",
                        "y",
                        "<|message|>",
                        "<|channel|>",
                        "<|constrain|>",
                        "\n",
                    ]),
                ),
                0..4,
            ),
            sel(&["", "<|message|>", "<|channel|>commentary", "\n", "<"]),
        )
            .prop_map(|(w, to, r, rest, end)| {
                let mut v = [w, to, r].concat();
                for (b, x) in rest {
                    v.extend_from_slice(b);
                    v.extend_from_slice(x);
                }
                v.extend_from_slice(end);
                v
            })
    }

    fn input() -> impl Strategy<Value = Vec<u8>> {
        let pieces = prop::collection::vec(
            prop_oneof![
                6 => prop::sample::select(PIECES).prop_map(|s| s.as_bytes().to_vec()),
                1 => prop::collection::vec(any::<u8>(), 1..3),
            ],
            1..24,
        )
        .prop_map(|v| v.concat());
        prop_oneof![pieces, header(), bounded()]
    }

    /// A head whose trigger looks through a bounded run of blanks, such a
    /// run of every length around the bounds, and the byte that decides.
    fn bounded() -> impl Strategy<Value = Vec<u8>> {
        (
            prop::sample::select(
                &[
                    "get_weather\n{",
                    "<function=f>",
                    "'f', ",
                    "[f(a=1)]",
                    "<tool_call>",
                    "```json",
                    "[TOOL_CALLS]",
                    "functions.f:0",
                ][..],
            ),
            prop::collection::vec(
                prop::sample::select(&[b' ', b'\t', b'\n', b'\r', 0x0C][..]),
                0..80,
            ),
            prop::sample::select(&["", "\"", "{", "}", "<", "a", "[/TOOL_CALLS]"][..]),
        )
            .prop_map(|(head, blanks, end)| [head.as_bytes(), &blanks, end.as_bytes()].concat())
    }

    proptest! {
        // No regression files: the top level of the repository is fixed, and
        // a failure prints its input.
        #![proptest_config(ProptestConfig {
            cases: 3000,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]
        #[test]
        fn trigger_answers_are_prefix_stable(x in input()) {
            prop_assume!(!x.is_empty());
            for t in triggers_for(&[]) {
                // The parser asks at a position holding one of the trigger's
                // first bytes (a line trigger: after its line break).
                let at: Vec<u8> = match t.pattern {
                    Pattern::Line { .. } => [b"\n".as_slice(), &x].concat(),
                    _ => x.clone(),
                };
                if !t.pattern.first_bytes().contains(&at[0]) {
                    continue;
                }
                let mut first: Option<(usize, Match)> = None;
                for k in 1..=at.len() {
                    let m = t.pattern.matches(&at[..k]);
                    if let Some((k0, m0)) = first {
                        prop_assert_eq!(
                            m, m0,
                            "trigger {:?} said {:?} at {:?} and {:?} at {:?}",
                            t.pattern.first_bytes(), m0,
                            String::from_utf8_lossy(&at[..k0]), m,
                            String::from_utf8_lossy(&at[..k])
                        );
                    } else if m != Match::Partial {
                        first = Some((k, m));
                    }
                }
            }
        }
    }
}
