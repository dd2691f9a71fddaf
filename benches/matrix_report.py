#!/usr/bin/env python3
"""Turns the criterion estimates of `cargo bench --bench matrix` into Markdown tables.

Usage: python3 benches/matrix_report.py [TARGET_DIR]   (default: target)

Reads TARGET_DIR/criterion/matrix_<size>/<dialect>/<chunk>/new/{estimates,benchmark}.json and prints, per
argument size, a table of dialect × chunk size with throughput (MB/s, 10^6 bytes per second, from the mean) and
the mean cost per chunk (ns). Then the scaling exponent per dialect and chunk size from 10 KB to 1 MB arguments
(slope of log time against log input size; 1.0 is linear, 2.0 quadratic).
Standard library only.
"""
import json
import math
import os
import sys

SIZES = ["100B", "10KB", "1MB"]
CHUNKS = ["1B", "4B", "16B", "64B", "whole"]


def load(root):
    data = {}
    base = os.path.join(root, "criterion")
    for size in SIZES:
        gdir = os.path.join(base, f"matrix_{size}")
        if not os.path.isdir(gdir):
            continue
        for dialect in sorted(os.listdir(gdir)):
            ddir = os.path.join(gdir, dialect)
            if not os.path.isdir(ddir) or dialect == "report":
                continue
            for chunk in CHUNKS:
                new = os.path.join(ddir, chunk, "new")
                try:
                    with open(os.path.join(new, "estimates.json")) as f:
                        est = json.load(f)
                    with open(os.path.join(new, "benchmark.json")) as f:
                        bench = json.load(f)
                except FileNotFoundError:
                    continue
                nbytes = bench["throughput"]["Bytes"]
                data[(size, dialect, chunk)] = (est["mean"]["point_estimate"], nbytes)
    return data


def main(argv):
    root = argv[0] if argv else "target"
    data = load(root)
    if not data:
        print(f"no matrix estimates under {root}/criterion; run `cargo bench --bench matrix` first", file=sys.stderr)
        return 1
    dialects = sorted({d for (_, d, _) in data})
    for size in SIZES:
        rows = [d for d in dialects if any((size, d, c) in data for c in CHUNKS)]
        if not rows:
            continue
        nbytes = next(data[(size, d, c)][1] for d in rows for c in CHUNKS if (size, d, c) in data)
        print(f"\n**Arguments {size}** (input ≈ {nbytes:,} bytes). Cells: MB/s · ns per chunk.\n")
        print("| dialect | " + " | ".join(CHUNKS) + " |")
        print("|---|" + "---:|" * len(CHUNKS))
        for d in rows:
            cells = []
            for c in CHUNKS:
                if (size, d, c) not in data:
                    cells.append("–")
                    continue
                ns, n = data[(size, d, c)]
                mbps = n / (ns / 1e9) / 1e6
                chunks = 1 if c == "whole" else math.ceil(n / int(c[:-1]))
                cells.append(f"{mbps:,.0f} · {ns / chunks:,.0f}")
            print(f"| {d} | " + " | ".join(cells) + " |")
    print("\n**Scaling exponent**, 10 KB → 1 MB arguments (log time / log size; 1.00 = linear).\n")
    print("| dialect | " + " | ".join(CHUNKS) + " |")
    print("|---|" + "---:|" * len(CHUNKS))
    for d in dialects:
        cells = []
        for c in CHUNKS:
            a, b = data.get(("10KB", d, c)), data.get(("1MB", d, c))
            if not a or not b:
                cells.append("–")
                continue
            cells.append(f"{math.log(b[0] / a[0]) / math.log(b[1] / a[1]):.2f}")
        print(f"| {d} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
