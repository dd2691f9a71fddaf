#!/usr/bin/env bash
# Smoke-runs every fuzz target for SECONDS (default 30) each on the stable
# toolchain: installs cargo-fuzz if missing, seeds the corpora, builds, runs.
# Fails if any target crashes (the input is left in fuzz/artifacts/<target>/).
# Extra arguments after SECONDS go to libFuzzer (e.g. -jobs=2 -workers=2).
set -uo pipefail
secs="${1:-30}"
shift || true
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
# cargo-fuzz passes -Z flags to rustc (sanitizer, coverage); stable accepts
# them with RUSTC_BOOTSTRAP=1. See fuzz/README.md.
export RUSTC_BOOTSTRAP=1
start=$(date +%s)
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --version 0.13.2 --locked || exit 2
fi
./seed.sh || exit 2
targets=$(cargo fuzz list)
cargo fuzz build || exit 2
built=$(date +%s)
echo "smoke: build took $((built - start)) s"
failed=()
for t in $targets; do
    log="$here/artifacts/smoke-$t.log"
    mkdir -p "$here/artifacts"
    cargo fuzz run "$t" -- -max_total_time="$secs" -rss_limit_mb=2048 "$@" >"$log" 2>&1
    rc=$?
    runs=$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -1 | grep -Eo '[0-9]+')
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        echo "smoke: $t: ok, ${runs:-?} executions in ${secs}s ($cov)"
    else
        echo "smoke: $t: FAILED (exit $rc), log $log"
        grep -E "panicked at|^thread|Test unit written" -A3 "$log" | head -20
        failed+=("$t")
    fi
done
end=$(date +%s)
echo "smoke: total wall time $((end - start)) s (build $((built - start)) s)"
if [ ${#failed[@]} -gt 0 ]; then
    echo "smoke: crashes in: ${failed[*]}"
    exit 1
fi
