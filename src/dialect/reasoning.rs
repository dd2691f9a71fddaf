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
//! | Harmony `<\|channel\|>analysis<\|message\|>…<\|end\|>` | GPT-OSS (read by the Harmony dialect) |
//!
//! Calls written inside reasoning are never extracted: the parser does not
//! look for triggers there. A prefill (the prompt's tail) can leave a block
//! open, so that the output starts inside reasoning ([`open_in_prefill`]).

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
