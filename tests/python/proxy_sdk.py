"""The official `openai` and `anthropic` SDKs against a running toolstream proxy
(tests/proxy_python_sdk.rs starts the proxy in front of a scripted upstream).

Usage: proxy_sdk.py BASE_URL  -> prints one JSON object: case name -> result.
Each scenario marker (`scenario:...`) tells the scripted upstream which
recorded stream to replay. Errors are reported by the SDK's exception class.
"""

import json
import sys

import anthropic
import openai

BASE = sys.argv[1]
HERMES = "scenario:real:smollm2-hermes-weather-001"
PLAIN = "scenario:stream:smollm2-chat-plain.sse"
FORCED = "scenario:stream:smollm2-chat-tools-forced.sse"
CUT = "scenario:cut:stream:smollm2-chat-tools-forced.sse"

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city"],
}
OAI_TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather.", "parameters": WEATHER}}]
ANT_TOOLS = [{"name": "get_weather", "description": "Get the weather.", "input_schema": WEATHER}]
RESP_TOOLS = [{"type": "function", "name": "get_weather", "description": "Get the weather.", "parameters": WEATHER}]

oai = openai.OpenAI(base_url=BASE + "/v1", api_key="dummy", max_retries=0)
ant = anthropic.Anthropic(base_url=BASE, api_key="dummy", max_retries=0)
out = {}


def case(name):
    def wrap(f):
        try:
            out[name] = f()
        except Exception as e:  # the class is the result
            out[name] = {"exception": type(e).__name__, "message": str(e)[:300]}
        return f

    return wrap


@case("openai_chat_tools")
def _():
    r = oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "weather in Paris? " + HERMES}], tools=OAI_TOOLS)
    c = r.choices[0]
    return {"finish": c.finish_reason, "calls": [[t.function.name, json.loads(t.function.arguments)] for t in c.message.tool_calls or []], "id": c.message.tool_calls[0].id}


@case("openai_chat_stream_tools")
def _():
    with oai.chat.completions.stream(model="gpt-4o", messages=[{"role": "user", "content": "weather? " + HERMES}], tools=OAI_TOOLS) as s:
        for _ in s:
            pass
        r = s.get_final_completion()
    c = r.choices[0]
    return {"finish": c.finish_reason, "calls": [[t.function.name, json.loads(t.function.arguments)] for t in c.message.tool_calls or []]}


@case("openai_chat_tool_result_round_trip")
def _():
    r = oai.chat.completions.create(
        model="gpt-4o",
        tools=OAI_TOOLS,
        messages=[
            {"role": "user", "content": "weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny. " + PLAIN},
        ],
    )
    return {"finish": r.choices[0].finish_reason, "text": r.choices[0].message.content}


@case("openai_chat_stream_text")
def _():
    text = ""
    for ch in oai.chat.completions.create(model="gpt-4o", stream=True, stream_options={"include_usage": True}, messages=[{"role": "user", "content": "hi " + PLAIN}]):
        if ch.choices and ch.choices[0].delta.content:
            text += ch.choices[0].delta.content
    return {"text": text}


@case("openai_responses_tools")
def _():
    r = oai.responses.create(model="gpt-5-codex", input=[{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "weather? " + FORCED}], tools=RESP_TOOLS)
    return {"status": r.status, "calls": [[o.name, json.loads(o.arguments)] for o in r.output if o.type == "function_call"]}


@case("openai_responses_stream_tools")
def _():
    with oai.responses.stream(model="gpt-5-codex", input="weather? " + HERMES, tools=RESP_TOOLS) as s:
        for _ in s:
            pass
        r = s.get_final_response()
    return {"status": r.status, "calls": [[o.name, json.loads(o.arguments)] for o in r.output if o.type == "function_call"]}


@case("openai_responses_tool_output_round_trip")
def _():
    r = oai.responses.create(
        model="gpt-5-codex",
        tools=RESP_TOOLS,
        input=[
            {"role": "user", "content": "weather?"},
            {"type": "function_call", "call_id": "call_9", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
            {"type": "function_call_output", "call_id": "call_9", "output": "18 C. " + PLAIN},
        ],
    )
    return {"status": r.status, "text": r.output_text}


@case("anthropic_tools")
def _():
    m = ant.messages.create(model="claude-sonnet-4-5", max_tokens=256, tools=ANT_TOOLS, messages=[{"role": "user", "content": "weather? " + HERMES}])
    return {"stop": m.stop_reason, "calls": [[b.name, b.input] for b in m.content if b.type == "tool_use"], "id": [b.id for b in m.content if b.type == "tool_use"][0]}


@case("anthropic_stream_tools")
def _():
    with ant.messages.stream(model="claude-sonnet-4-5", max_tokens=256, tools=ANT_TOOLS, messages=[{"role": "user", "content": "weather? " + FORCED}]) as s:
        for _ in s:
            pass
        m = s.get_final_message()
    return {"stop": m.stop_reason, "calls": [[b.name, b.input] for b in m.content if b.type == "tool_use"]}


@case("anthropic_tool_result_round_trip")
def _():
    m = ant.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=256,
        tools=ANT_TOOLS,
        messages=[
            {"role": "user", "content": "weather in Paris?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True, "content": [{"type": "text", "text": "service down"}]}, {"type": "text", "text": "try again " + PLAIN}]},
        ],
    )
    return {"stop": m.stop_reason, "text": "".join(b.text for b in m.content if b.type == "text")}


@case("anthropic_count_tokens")
def _():
    r = ant.messages.count_tokens(model="claude-sonnet-4-5", messages=[{"role": "user", "content": "hello there"}])
    return {"input_tokens": r.input_tokens}


@case("openai_error_404")
def _():
    oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "scenario:status:404"}])


@case("openai_error_500")
def _():
    oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "scenario:status:500"}])


@case("anthropic_error_404")
def _():
    ant.messages.create(model="c", max_tokens=5, messages=[{"role": "user", "content": "scenario:status:404"}])


@case("anthropic_error_500")
def _():
    ant.messages.create(model="c", max_tokens=5, messages=[{"role": "user", "content": "scenario:status:500"}])


@case("anthropic_bad_request")
def _():
    ant.messages.create(model="c", max_tokens=5, messages=[{"role": "robot", "content": "x"}])


@case("openai_stream_cut")
def _():
    for _ in oai.chat.completions.create(model="gpt-4o", stream=True, tools=OAI_TOOLS, messages=[{"role": "user", "content": CUT}]):
        pass


@case("anthropic_stream_cut")
def _():
    with ant.messages.stream(model="c", max_tokens=256, tools=ANT_TOOLS, messages=[{"role": "user", "content": CUT}]) as s:
        for _ in s:
            pass


@case("responses_stream_cut")
def _():
    # The Responses stream reports failure in-band: an `error` event, then
    # `response.failed` (the SDK yields them rather than raising).
    types, message = [], None
    with oai.responses.stream(model="gpt-5-codex", input=CUT, tools=RESP_TOOLS) as s:
        for ev in s:
            types.append(ev.type)
            if ev.type == "error":
                message = ev.message
    return {"types": types, "message": message}


print(json.dumps(out))
