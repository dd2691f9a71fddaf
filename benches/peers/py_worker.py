"""Long-lived worker for the Python peer harnesses (run with the peers' venv interpreter).

Each standard-input line is a request {"harness": "py_json_repair.py", "argv": [...], "input": "..."};
the worker runs that harness from ../shared/peers UNCHANGED, in this process (runpy, as
__main__, with sys.argv, stdin and stdout redirected), and answers one line
{"out": <the harness's JSON object>} or {"harness_error": "..."}.

Why: the libraries are imported once (the first request pays the import; later ones find the
modules in sys.modules), so a corpus of hundreds of inputs does not pay 0.1-1.2 s of interpreter
and import start-up per input. Timing stays the harness's own: timing_ms.parse_* over --repeat K
runs, measured inside the harness around the library calls only.

Usage: python py_worker.py SHARED_PEERS_DIR
"""
import io
import json
import os
import runpy
import sys
import traceback


class _Stdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


def main(peers_dir: str) -> None:
    out = sys.stdout
    inp = sys.stdin
    base_path = list(sys.path)
    for line in inp:
        if not line.strip():
            continue
        req = json.loads(line)
        path = os.path.join(peers_dir, req["harness"])
        buf = io.StringIO()
        sys.argv = [path] + [str(a) for a in req.get("argv", [])]
        sys.stdin = _Stdin(req["input"].encode("utf-8", errors="surrogatepass"))
        sys.stdout = buf
        reply = None
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as e:
            if e.code not in (0, None):
                reply = {"harness_error": f"exit {e.code}: {buf.getvalue()[-2000:]}"}
        except BaseException:  # noqa: BLE001  a harness bug, reported, worker keeps going
            reply = {"harness_error": traceback.format_exc()[-4000:]}
        finally:
            sys.stdout = out
            sys.stdin = inp
            sys.path[:] = base_path
        if reply is None:
            text = buf.getvalue().strip().splitlines()
            try:
                reply = {"out": json.loads(text[-1])}
            except Exception:  # noqa: BLE001
                reply = {"harness_error": "no JSON output: " + buf.getvalue()[-2000:]}
        out.write(json.dumps(reply, ensure_ascii=False, default=repr) + "\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1])
