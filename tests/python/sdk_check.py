"""Feeds toolstream's encoder output to the official Python SDKs.

Usage: python sdk_check.py MANIFEST.json

The manifest is a list of {"name", "target": "openai"|"anthropic"|"responses",
"file"}. Each file is served by a loopback HTTP server as the body of a
`text/event-stream` response, and the real client for the target consumes it
through its streaming helper:

* openai:    client.chat.completions.create(stream=True) (openai.Stream) and
             client.chat.completions.stream(...).get_final_completion()
* responses: client.responses.stream(...): its typed terminal event
             (`response.completed` / `.incomplete`), and
             get_final_response() when completed
* anthropic: client.messages.stream(...).get_final_message()

Prints one JSON object per manifest entry (a list), with what the client
accumulated: text, thinking, tool calls (id, name, parsed arguments), the
finish/stop reason, usage, or the error the client raised.
"""

import http.server
import json
import sys
import threading

import anthropic
import openai


def serve(state):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            n = int(self.headers.get("content-length") or 0)
            self.rfile.read(n)
            body = state["body"]
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def usage_of(u, names):
    if u is None:
        return None
    return {k: getattr(u, src, None) for k, src in names.items()}


def check_openai(base):
    client = openai.OpenAI(api_key="test", base_url=base + "/v1", max_retries=0)
    args = dict(model="m", messages=[{"role": "user", "content": "hi"}], stream_options={"include_usage": True})
    # Raw stream: openai.Stream over the HTTP response.
    raw = client.chat.completions.create(stream=True, **args)
    assert isinstance(raw, openai.Stream), type(raw)
    chunks = [c for c in raw]
    reasoning = ""
    for c in chunks:
        for ch in c.choices:
            r = getattr(ch.delta, "reasoning_content", None)
            if r:
                reasoning += r
    # The accumulating helper.
    with client.chat.completions.stream(**args) as s:
        for _ in s:
            pass
        try:
            final = s.get_final_completion()
        except openai.LengthFinishReasonError as e:
            # The helper refuses to *parse* a cut completion but still
            # carries what it accumulated.
            final = e.completion
    msg = final.choices[0].message
    return {
        "chunks": len(chunks),
        "text": msg.content or "",
        "thinking": reasoning,
        "tool_calls": [
            {"id": tc.id, "name": tc.function.name, "arguments": json.loads(tc.function.arguments)}
            for tc in (msg.tool_calls or [])
        ],
        "finish": final.choices[0].finish_reason,
        "usage": usage_of(final.usage, {"input": "prompt_tokens", "output": "completion_tokens"}),
    }


def check_responses(base):
    client = openai.OpenAI(api_key="test", base_url=base + "/v1", max_retries=0)
    final = None
    errors = []
    with client.responses.stream(model="m", input="hi") as s:
        for ev in s:
            if ev.type in ("response.completed", "response.incomplete", "response.failed"):
                final = ev.response
            elif ev.type == "error":
                # The Responses helper yields errors as typed events instead of raising.
                errors.append(ev.message)
        if final is not None and final.status == "completed":
            # The accumulating helper agrees with the terminal event.
            assert s.get_final_response().id == final.id
    assert final is not None, "no terminal response event"
    if errors or final.status == "failed":
        failed = final.error.message if final.error else ""
        return {"error": "error event: %s; response.failed: %s" % ("; ".join(errors), failed)}

    text, thinking, calls = "", "", []
    for item in final.output:
        if item.type == "message":
            for c in item.content:
                text += getattr(c, "text", "") or ""
        elif item.type == "reasoning":
            for part in item.summary or []:
                thinking += part.text
        elif item.type == "function_call":
            calls.append({"id": item.call_id, "name": item.name, "arguments": json.loads(item.arguments)})
    return {
        "text": text,
        "thinking": thinking,
        "tool_calls": calls,
        "finish": final.status,
        "usage": usage_of(final.usage, {"input": "input_tokens", "output": "output_tokens"}),
    }


def check_anthropic(base):
    client = anthropic.Anthropic(api_key="test", base_url=base, max_retries=0)
    with client.messages.stream(model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as s:
        for _ in s:
            pass
        final = s.get_final_message()
    text, thinking, calls, signatures = "", "", [], []
    for b in final.content:
        if b.type == "text":
            text += b.text
        elif b.type == "thinking":
            thinking += b.thinking
            if b.signature:
                signatures.append(b.signature)
        elif b.type == "tool_use":
            calls.append({"id": b.id, "name": b.name, "arguments": b.input})
    return {
        "text": text,
        "thinking": thinking,
        "signatures": signatures,
        "tool_calls": calls,
        "finish": final.stop_reason,
        "usage": usage_of(final.usage, {"input": "input_tokens", "output": "output_tokens"}),
    }


CHECKS = {"openai": check_openai, "responses": check_responses, "anthropic": check_anthropic}


def main():
    manifest = json.load(open(sys.argv[1]))
    state = {"body": b""}
    srv = serve(state)
    base = "http://127.0.0.1:%d" % srv.server_address[1]
    results = []
    for entry in manifest:
        with open(entry["file"], "rb") as f:
            state["body"] = f.read()
        out = {"name": entry["name"], "target": entry["target"]}
        try:
            out.update(CHECKS[entry["target"]](base))
        except (openai.APIError, anthropic.APIError) as e:
            out["error"] = "%s: %s" % (type(e).__name__, getattr(e, "message", str(e)))
        results.append(out)
    srv.shutdown()
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
