"""Records #40's prompt evidence table (docs/prompts.md): corpus/eval/run.py's
prompt arms (arms.json `prompts`) into corpus/eval/prompts/, with one
deviation from run.py's arms, set per model process by the environment:

    TS_PROMPT_SERVER=llama-server   the arms run against llama.cpp's
                                    `llama-server` instead of
                                    `python -m llama_cpp.server`
    TS_PROMPT_TEMPLATE=FILE         llama-server --jinja applies this
                                    template file (`--chat-template-file`)

Why: llama-cpp-python's `gemma` chat format drops the system message
("system messages are not allowed on Google's Gemma models"), so behind
`llama_cpp.server` every emulation prompt -- the proxy sends it as the
system message -- is thrown away and Gemma answers the bare user message
(our first Gemma replies were the same, token for token, with the naive and
the json prompt). The Gemma GGUF carries no chat template, so
`llama-server --jinja` falls back to ChatML (Gemma then writes `<|im_end|>`
and echoes the request), and its built-in non-Jinja `gemma` template sent
Gemma a 3-token prompt through the proxy: `gemma.jinja` here writes Gemma's
own turns and folds the system message into the first user turn, as
Gemma's published template does.
SmolLM2's ChatML template keeps the system message: it stays on
`llama_cpp.server`.

Everything else (arguments, output, resuming, provenance) is run.py's:

    TS_PROMPT_SERVER=llama-server TS_PROMPT_TEMPLATE=corpus/eval/prompts/gemma.jinja python3 corpus/eval/prompts/run_prompts.py \\
        --arms prompts --models gemma --tasks 10 --max-tokens 128 \\
        --out corpus/eval/prompts/runs-gemma.jsonl

The simplified-schema arms (`simplified.json`, docs/prompts.md "Simplified
schemas"): `p-FORMAT-small-simplified` is the arm `p-FORMAT-small` with one
change, made here on the client's side: the task's tool list is replaced by
the model's simplified one (`simplified.json` → `models` → `tools`, written
by `toolstream tools simplify --profile PROFILE` from the same tool list),
so the proxy and the model see nothing but simplified schemas. Each record
names the profile and the tool file it was sent (`simplify_profile`,
`simplified_tools`); tests/prompt_table_replay.rs restores each call through
the profile's inverse before it normalizes and scores it. Run them on the
dev split (`--split dev`, as the prompt arms) into `simplified-MODEL.jsonl`:

    python3 corpus/eval/prompts/run_prompts.py --arms simplified --split dev --tiers complex \\
        --models smollm2 --tasks 10 --max-tokens 128 --out corpus/eval/prompts/simplified-smollm2.jsonl
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import run  # noqa: E402

KINDS = {"llama-server": run.LS, "llama_cpp.server": run.LCP}

with open(os.path.join(HERE, "simplified.json")) as _f:
    SIMPLIFIED = json.load(_f)


def add_simplified_arms():
    """Registers the simplified-schema arms (`simplified` expands to all of
    them) and makes run.ask send the model's simplified tool list for them."""
    names = []
    for arm, base in SIMPLIFIED["arms"].items():
        run.ARMS[arm] = dict(run.ARMS[base], label=f"{base} with the model's simplified schemas (simplified.json)")
        names.append(arm)
    expand = run.expand_arms

    def expand_with_simplified(spec):
        return [a for part in spec.split(",")
                for a in (names if part.strip() == "simplified" else expand(part))]

    run.expand_arms = expand_with_simplified
    ask = run.ask

    def ask_simplified(client, server, name, arm, t, args):
        if arm not in SIMPLIFIED["arms"]:
            return ask(client, server, name, arm, t, args)
        m = SIMPLIFIED["models"][name]
        if t["tools"] != SIMPLIFIED["original"]:
            sys.exit(f"{arm}: task {t['id']} offers {t['tools']}, simplified.json simplifies {SIMPLIFIED['original']}")
        rec = ask(client, server, name, arm, dict(t, tools=m["tools"]), args)
        rec["simplify_profile"] = m["profile"]
        rec["simplified_tools"] = m["tools"]
        return rec

    run.ask = ask_simplified


def main():
    add_simplified_arms()
    kind = os.environ.get("TS_PROMPT_SERVER")
    if kind:
        if kind not in KINDS:
            sys.exit(f"TS_PROMPT_SERVER={kind}: one of {', '.join(KINDS)}")
        for a in run.PROMPT_ARMS + list(SIMPLIFIED["arms"]):
            run.ARMS[a] = dict(run.ARMS[a], server=KINDS[kind])
    template = os.environ.get("TS_PROMPT_TEMPLATE")
    if template:
        start = run.Server.start

        def start_with_template(self):
            if self.kind == run.LS and "--chat-template-file" not in self.cmd:
                self.cmd += ["--chat-template-file", os.path.abspath(template)]
            start(self)

        run.Server.start = start_with_template
    # run.py re-executes this script in the eval venv (sys.argv[0]).
    run.main()


if __name__ == "__main__":
    main()
