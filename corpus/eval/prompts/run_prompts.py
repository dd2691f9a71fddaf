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
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import run  # noqa: E402

KINDS = {"llama-server": run.LS, "llama_cpp.server": run.LCP}


def main():
    kind = os.environ.get("TS_PROMPT_SERVER")
    if kind:
        if kind not in KINDS:
            sys.exit(f"TS_PROMPT_SERVER={kind}: one of {', '.join(KINDS)}")
        for a in run.PROMPT_ARMS:
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
