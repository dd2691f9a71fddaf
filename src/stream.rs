//! Async adapter: turn any `Stream` of byte chunks into a `Stream` of events.
//!
//! Available with the `tokio` feature.
//!
//! ```
//! use bytes::Bytes;
//! use futures_core::Stream;
//! use toolstream::{stream::events, Config, Event};
//!
//! fn parse_stream(chunks: impl Stream<Item = Bytes> + Unpin) -> impl Stream<Item = Event> {
//!     events(chunks, Config::default())
//! }
//! ```

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;

use crate::{Config, Event, Parser};

/// A stream of [`Event`]s parsed from a stream of byte chunks.
///
/// Each chunk is fed without copying ([`Parser::feed_bytes`]); the events it
/// completes are yielded one by one; when the inner stream ends, the parser
/// is finished (open calls are closed and flagged `truncated`).
pub struct EventStream<S> {
    inner: Option<S>,
    parser: Parser,
    queue: VecDeque<Event>,
    scratch: Vec<Event>,
}

impl<S> EventStream<S> {
    /// Wraps `inner`.
    pub fn new(inner: S, cfg: Config) -> Self {
        EventStream {
            inner: Some(inner),
            parser: Parser::new(cfg),
            queue: VecDeque::new(),
            scratch: Vec::new(),
        }
    }
}

impl<S, B> Stream for EventStream<S>
where
    S: Stream<Item = B> + Unpin,
    B: Into<Bytes>,
{
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let this = &mut *self;
        loop {
            if let Some(e) = this.queue.pop_front() {
                return Poll::Ready(Some(e));
            }
            let Some(inner) = this.inner.as_mut() else {
                return Poll::Ready(None);
            };
            match Pin::new(inner).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(chunk)) => {
                    this.parser.feed_bytes(chunk.into(), &mut this.scratch);
                    this.queue.extend(this.scratch.drain(..));
                }
                Poll::Ready(None) => {
                    this.inner = None;
                    this.parser.finish(&mut this.scratch);
                    this.queue.extend(this.scratch.drain(..));
                }
            }
        }
    }
}

/// Parses a stream of byte chunks into a stream of events.
pub fn events<S, B>(chunks: S, cfg: Config) -> EventStream<S>
where
    S: Stream<Item = B> + Unpin,
    B: Into<Bytes>,
{
    EventStream::new(chunks, cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Chunks(Vec<Bytes>);
    impl Stream for Chunks {
        type Item = Bytes;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Bytes>> {
            Poll::Ready(if self.0.is_empty() {
                None
            } else {
                Some(self.0.remove(0))
            })
        }
    }

    #[tokio::test]
    async fn adapts_a_stream() {
        use futures_util::StreamExt;
        let chunks = Chunks(vec![
            Bytes::from_static(b"Hi <tool_call>{\"name\": \"f\", "),
            Bytes::from_static(b"\"arguments\": {\"a\": 1}}</tool_call>"),
        ]);
        let events: Vec<Event> = events(chunks, Config::default()).collect().await;
        let parsed = crate::Parsed::from_events(events);
        assert_eq!(parsed.text, "Hi ");
        assert_eq!(parsed.calls[0].arguments, r#"{"a": 1}"#);
    }
}
