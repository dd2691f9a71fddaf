//! Reasoning blocks: the THINKING channel.
//!
//! | convention | models |
//! |---|---|
//! | `<seed:think>…</seed:think>` | ByteDance Seed-OSS |
//! | `<think>…</think>`, `<thinking>…</thinking>` | DeepSeek-R1, Qwen3, QwQ, GLM, MiniMax, Nemotron, Hunyuan, LFM2; Granite 3.2+ (`<response>…</response>` after it is markup) |
//! | `[THINK]…[/THINK]` | Magistral, Ministral 3 |
//! | `<\|START_THINKING\|>…<\|END_THINKING\|>` | Cohere Command R7B / A |
//! | `<\|channel>thought⏎…<channel\|>` | Gemma 4 |
//! | `◁think▷…◁/think▷` | Kimi-VL-Thinking |
//! | `<\|open\|>think<\|sep\|>…<\|close\|>think<\|sep\|>` | Kimi K3 |
//! | Harmony `<\|channel\|>analysis<\|message\|>…<\|end\|>` | GPT-OSS (read by the Harmony dialect) |
//!
//! Calls written inside reasoning are not extracted: the parser does not
//! look for triggers there. The exception is a per-family policy
//! ([`crate::Config::calls_in_reasoning`], set by
//! [`crate::Config::for_model`] for Qwen 3.5+ and DeepSeek's DSML
//! generation, whose real outputs leave `<think>` open and write the call
//! in it): there a call opener ([`CALL_OPENERS`]) inside `<think>` ends the
//! reasoning, and the call is read with a
//! [`crate::RepairKind::CallInReasoning`] repair. A prefill (the prompt's
//! tail) can leave a block open, so that the output starts inside
//! reasoning ([`open_in_prefill`]).
//!
//! The thinking text is everything between the tags, its edge line breaks
//! included (`<think>\nPlan.\n</think>` thinks `\nPlan.\n`), as vLLM's
//! reasoning parsers (`BaseThinkingReasoningParser.extract_reasoning`
//! partitions on the tags and strips nothing) and SGLang's
//! (`BaseReasoningFormatDetector`, which stopped stripping) give it: a
//! client that compares `reasoning_content` with either sees the same
//! text, and templates that re-render it (Qwen3's strips the edge line
//! breaks and writes its own) round-trip. The line breaks between the
//! closing tag and the text are markup (see the dialects' docs).

use super::{Action, Trigger};
use crate::scan::{match_lit, Match, Pattern};

/// Opening and closing tags whose opening tag in a prefill counts wherever
/// it is, as long as no closing tag follows it.
pub(crate) const TAGS: &[(&[u8], &[u8])] = &[
    (b"<think>", b"</think>"),
    (b"<thinking>", b"</thinking>"),
    (b"<seed:think>", b"</seed:think>"),
];

/// Conventions whose opening tag counts in a prefill only at its very end
/// (followed by blanks only): system prompts describe these tags in prose
/// (vLLM's Mistral parser distrusts a `[THINK]` found in the prompt).
pub(crate) const TAIL_TAGS: &[(&[u8], &[u8])] = &[
    (b"[THINK]", b"[/THINK]"),
    (b"<|START_THINKING|>", b"<|END_THINKING|>"),
    (b"<|channel>thought", b"<channel|>"),
    ("◁think▷".as_bytes(), "◁/think▷".as_bytes()),
    (b"<|channel|>analysis<|message|>", b"<|end|>"),
    (b"<|open|>think<|sep|>", b"<|close|>think<|sep|>"),
];

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"<think>"),
        action: Action::Reasoning { close: b"</think>" },
    },
    Trigger {
        pattern: Pattern::Lit(b"<thinking>"),
        action: Action::Reasoning {
            close: b"</thinking>",
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<seed:think>"),
        action: Action::Reasoning {
            close: b"</seed:think>",
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"[THINK]"),
        action: Action::Reasoning { close: b"[/THINK]" },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|START_THINKING|>"),
        action: Action::Reasoning {
            close: b"<|END_THINKING|>",
        },
    },
    Trigger {
        pattern: Pattern::Custom {
            first: b"<",
            matches: gemma_thought,
        },
        action: Action::Reasoning {
            close: b"<channel|>",
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|open|>think<|sep|>"),
        action: Action::Reasoning {
            close: b"<|close|>think<|sep|>",
        },
    },
    Trigger {
        pattern: Pattern::Lit("◁think▷".as_bytes()),
        action: Action::Reasoning {
            close: "◁/think▷".as_bytes(),
        },
    },
];

/// `<|channel>thought` and the line break after it.
fn gemma_thought(at: &[u8]) -> Match {
    match match_lit(b"<|channel>thought", at) {
        Match::Full(n) => match at.get(n) {
            None => Match::Partial,
            Some(b'\n') => Match::Full(n + 1),
            Some(_) => Match::Full(n),
        },
        m => m,
    }
}

/// What opens a call inside `<think>` for the families that write calls
/// there: a `<tool_call>` tag (Qwen's XML and JSON forms) and a DSML tag.
pub(crate) const CALL_OPENERS: &[&[u8]] = &[b"<tool_call>", "<｜DSML｜".as_bytes(), b"<|DSML|"];

/// The first call opener in `rest` (reasoning that `close` ends), and how
/// many bytes at the end of `rest` may still become one.
pub(crate) fn call_opener(close: &[u8], rest: &[u8]) -> (Option<usize>, usize) {
    if close != b"</think>" {
        return (None, 0);
    }
    let first = CALL_OPENERS
        .iter()
        .filter_map(|o| memchr::memmem::find(rest, o))
        .min();
    if first.is_some() {
        return (first, 0);
    }
    let keep = CALL_OPENERS
        .iter()
        .filter_map(|o| {
            (1..o.len().min(rest.len() + 1))
                .rev()
                .find(|&m| rest.ends_with(&o[..m]))
        })
        .max()
        .unwrap_or(0);
    (None, keep)
}

/// If `prefill` (the prompt's tail) leaves a reasoning block open, the tag that closes it.
pub(crate) fn open_in_prefill(prefill: &[u8]) -> Option<&'static [u8]> {
    let mut best: Option<(usize, &'static [u8])> = None;
    for (open, close) in TAGS {
        if let Some(p) = memchr::memmem::rfind(prefill, open) {
            let after = &prefill[p + open.len()..];
            if memchr::memmem::find(after, close).is_none() && best.is_none_or(|(b, _)| p > b) {
                best = Some((p, close));
            }
        }
    }
    let tail = prefill.trim_ascii_end();
    for (open, close) in TAIL_TAGS {
        if tail.ends_with(open) {
            let p = tail.len() - open.len();
            if best.is_none_or(|(b, _)| p > b) {
                best = Some((p, close));
            }
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefill() {
        assert_eq!(
            open_in_prefill(b"<|im_start|>assistant\n<think>\n"),
            Some(&b"</think>"[..])
        );
        assert_eq!(open_in_prefill(b"<think>\n\n</think>\n\n"), None);
        assert_eq!(open_in_prefill(b"assistant\n"), None);
        assert_eq!(
            open_in_prefill(b"<seed:think>"),
            Some(&b"</seed:think>"[..])
        );
        assert_eq!(
            open_in_prefill(
                b"[SYSTEM_PROMPT]Think in [THINK] tags.[/SYSTEM_PROMPT][INST]hi[/INST][THINK]"
            ),
            Some(&b"[/THINK]"[..])
        );
        assert_eq!(
            open_in_prefill(b"[SYSTEM_PROMPT]Write [THINK] first.[/SYSTEM_PROMPT][INST]hi[/INST]"),
            None
        );
        assert_eq!(
            open_in_prefill(b"<|start|>assistant<|channel|>analysis<|message|>"),
            Some(&b"<|end|>"[..])
        );
        assert_eq!(
            open_in_prefill(b"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|>"),
            Some(&b"<|END_THINKING|>"[..])
        );
        assert_eq!(
            open_in_prefill("◁think▷\n".as_bytes()),
            Some("◁/think▷".as_bytes())
        );
    }

    #[test]
    fn gemma() {
        assert_eq!(gemma_thought(b"<|channel>thought\nx"), Match::Full(18));
        assert_eq!(gemma_thought(b"<|channel>thought"), Match::Partial);
        assert_eq!(gemma_thought(b"<|channel|>"), Match::No);
    }
}
