//! What to send so that any model can call tools, and what to do with calls
//! before they run.
//!
//! Every module is usable on its own and depends only on the crate's public
//! types ([`Tools`](crate::Tools), [`Dialect`](crate::Dialect),
//! [`model::route`](crate::model::route), [`parse`](crate::parse)):
//!
//! | module | what it does |
//! |---|---|
//! | [`registry`] | model ids → capabilities, dialects, emulation format, size class |
//! | [`convert`] | tool lists between OpenAI chat, Responses, Anthropic, Gemini, Ollama and MCP, with a loss report |
//! | [`adapt`] | provider schema adapters (OpenAI strict, Gemini, Anthropic, Ollama) with inverses for call arguments; `tool_choice` and tool results per provider |
//! | [`simplify`] | schema simplification for small models, with an exact inverse for arguments |
//! | [`prompt`] | emulation prompts for models without native tool calling |
//! | [`constrain`] | GBNF grammars and JSON Schemas that admit only the calls a prompt asks for |
//! | [`search`] | BM25 tool ranking under a token budget |
//! | [`planning`] | structured tool errors, loop detection, parallel planning, namespacing, result shaping, description audit, text-intent fallback |
//!
//! See `docs/toolkit.md` for the design decisions.

pub mod adapt;
pub mod constrain;
pub mod convert;
pub mod planning;
pub mod prompt;
pub mod registry;
pub mod search;
pub mod simplify;

pub use convert::{Tool, ToolFormat};
pub use registry::{Capabilities, EmulationFormat, ModelInfo, Registry, SizeClass};

/// Estimated token count of a text: one token per four bytes of UTF-8,
/// rounded up, plus one per line break (the estimate 000 uses, made a little
/// pessimistic for the short lines of schemas and prompts). Real tokenizers
/// give 3–4.5 bytes per token on English and JSON; the budgets built on this
/// estimate (a fifth of the context window) leave room for the difference.
///
/// ```
/// use toolstream::toolkit::estimate_tokens;
/// assert_eq!(estimate_tokens(""), 0);
/// assert_eq!(estimate_tokens("abcd"), 1);
/// assert_eq!(estimate_tokens("abcde\nf"), 3);
/// ```
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4) + text.bytes().filter(|&b| b == b'\n').count()
}
