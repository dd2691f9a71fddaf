"""Scores two dumps of the same BFCL rows -- calls as parsed, and the same
calls normalized -- with BFCL's checker (../shared/tools/bfcl_check.py) and
prints one JSON object: rows checked, passes of each, and the ids gained and
lost by normalizing. Rows of the exec/rest categories (no AST checker) are
left out, as tests/bfcl_score.py does.

Usage: normalize_bfcl.py PLAIN.jsonl NORMALIZED.jsonl SHARED_DIR
"""

import json
import os
import sys


def load(path):
    with open(path) as f:
        return {r["id"]: r["calls"] for r in map(json.loads, f)}


def main(argv):
    plain_path, norm_path, shared = argv
    sys.path.insert(0, os.path.join(shared, "tools"))
    import bfcl_check  # noqa: E402  (path set above)

    records = {}
    with open(os.path.join(shared, "corpus", "public", "bfcl_ground_truth.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            records[r["id"]] = r
    plain, norm = load(plain_path), load(norm_path)
    out = {"rows": 0, "plain_pass": 0, "normalized_pass": 0, "gained": [], "lost": []}
    for rid, calls in plain.items():
        rec = records.get(rid)
        if rec is None or rec.get("expected") in ("exec", "rest"):
            continue
        out["rows"] += 1
        a = bool(bfcl_check.check(calls, rec)["pass"])
        b = bool(bfcl_check.check(norm[rid], rec)["pass"])
        out["plain_pass"] += a
        out["normalized_pass"] += b
        if b and not a:
            out["gained"].append(rid)
        if a and not b:
            out["lost"].append(rid)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
