//! Reasoning blocks: the THINKING channel.
//!
//! `<think>…</think>` (DeepSeek-R1, Qwen3, QwQ, GLM, MiniMax, …) and
//! `<thinking>…</thinking>`. Calls written inside reasoning are never
//! extracted: the parser does not look for triggers there.

use super::{Action, Trigger};
use crate::scan::Pattern;

/// Opening and closing tags of every reasoning convention recognised in text.
pub(crate) const TAGS: &[(&[u8], &[u8])] =
    &[(b"<think>", b"</think>"), (b"<thinking>", b"</thinking>")];

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
];

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
    }
}
