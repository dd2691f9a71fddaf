//! The `tokio` adapters: `SseDecoder`, `NdjsonDecoder` and `StreamDecoder`
//! as `tokio_util::codec::Decoder`s behind `FramedRead`, fed by a reader
//! that returns a few bytes at a time, give what the push API gives.
#![cfg(feature = "tokio")]

mod codec_support;

use std::pin::Pin;
use std::task::{Context, Poll};

use codec_support::*;
use futures_util::StreamExt;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::codec::FramedRead;
use toolstream::ndjson::NdjsonDecoder;
use toolstream::provider::{decode, DecodeOptions, StreamDecoder};
use toolstream::sse::SseDecoder;

/// A reader that hands out at most `n` bytes per read.
struct Trickle {
    data: Vec<u8>,
    pos: usize,
    n: usize,
}

impl AsyncRead for Trickle {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let end = (self.pos + self.n)
            .min(self.data.len())
            .min(self.pos + buf.remaining());
        let pos = self.pos;
        buf.put_slice(&self.data[pos..end]);
        self.pos = end;
        Poll::Ready(Ok(()))
    }
}

fn capture(name: &str) -> Option<Vec<u8>> {
    capture_bytes(name)
}

#[tokio::test]
async fn stream_decoder_behind_framed_read() {
    for name in [
        "anthropic_tool_use.anthropic-sdk-python.sse",
        "gemini_tool_stream_crlf.rust-genai.sse",
        "ollama_native_thinking_tool.rig.ndjson",
        "bedrock_converse_two_tools.rig.eventstream",
    ] {
        let Some(data) = capture(name) else {
            return;
        };
        let want = decode(&data, &DecodeOptions::default());
        for n in [1, 7, 4096] {
            let reader = Trickle {
                data: data.clone(),
                pos: 0,
                n,
            };
            let got: Vec<_> = FramedRead::new(reader, StreamDecoder::new(DecodeOptions::default()))
                .map(|r| r.unwrap())
                .collect()
                .await;
            assert_eq!(got, want, "{name}, {n}-byte reads");
        }
    }
}

#[tokio::test]
async fn frame_decoders_behind_framed_read() {
    let Some(data) = capture("openrouter_parallel_comment_line.rig.sse") else {
        return;
    };
    let mut push = SseDecoder::new();
    let mut want = Vec::new();
    push.feed(&data, &mut want);
    push.finish(&mut want);
    let got: Vec<_> = FramedRead::new(
        Trickle {
            data: data.clone(),
            pos: 0,
            n: 5,
        },
        SseDecoder::new(),
    )
    .map(|r| r.unwrap())
    .collect()
    .await;
    assert_eq!(got, want);
    assert!(got.len() > 5);

    let Some(data) = capture("ollama_native_same_tool_4x.rig.ndjson") else {
        return;
    };
    let mut push = NdjsonDecoder::new();
    let mut want = Vec::new();
    push.feed(&data, &mut want);
    push.finish(&mut want);
    let got: Vec<_> = FramedRead::new(Trickle { data, pos: 0, n: 3 }, NdjsonDecoder::new())
        .map(|r| r.unwrap())
        .collect()
        .await;
    assert_eq!(got, want);
}
