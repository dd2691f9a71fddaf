#!/usr/bin/env bash
# A newcomer's first commands: clones this repository into a temporary
# folder, where no ../shared (the reference data CI keeps beside the
# checkout) exists, and runs the two commands of the README's "Two commands"
# section exactly as written there. Both must pass, and the tests that need
# ../shared must report their skips (the summary line of
# tests/zz_shared_summary.rs).
#
# The clone builds into this checkout's target/ (CARGO_TARGET_DIR), so the
# dependencies built for the main run are reused. Cargo names toolstream's
# own artifacts independently of the checkout's path and can take the main
# checkout's as fresh for the clone (their sources, in the main checkout,
# are unchanged): they are removed first, so the clone compiles its own, and
# again at the end, so the main checkout compiles its own the next time.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"

work="$(mktemp -d)"
# Cargo would take the clone's toolstream artifacts as fresh for the main
# checkout too (with the clone's paths compiled in): they go with the clone.
cleanup() {
    (cd "$repo" && cargo clean --quiet -p toolstream --release \
        && cargo clean --quiet -p toolstream --profile test-release) || true
    rm -rf "$work"
}
trap cleanup EXIT
git clone --quiet "$repo" "$work/toolstream"
cd "$work/toolstream"
if [ -e ../shared ]; then
    echo "fresh clone: $work/shared exists; this check needs a folder without it" >&2
    exit 1
fi
# The runs below are the user's: nothing may demand ../shared.
unset TOOLSTREAM_REQUIRE_SHARED TOOLSTREAM_SHARED TOOLSTREAM_CAPTURES TOOLSTREAM_CORPUS

# The commands of the README's "Two commands" block, comments dropped.
mapfile -t commands < <(awk '
    /^## Two commands/ { section = 1; next }
    section && /^## / { exit }
    section && /^```/ { if (block) exit; block = 1; next }
    section && block && NF { sub(/[ \t]+#.*$/, ""); print }
' README.md)
if [ "${#commands[@]}" -ne 2 ]; then
    echo "fresh clone: expected two commands in the README's \"Two commands\" block, found ${#commands[@]}" >&2
    exit 1
fi

cargo clean --quiet -p toolstream --release
cargo clean --quiet -p toolstream --profile test-release

log="$CARGO_TARGET_DIR/fresh-clone.log"
: > "$log"
for c in "${commands[@]}"; do
    echo "fresh clone \$ $c"
    if ! bash -c "$c" >> "$log" 2>&1; then
        tail -n 60 "$log" >&2
        echo "fresh clone: \`$c\` failed (log: $log)" >&2
        exit 1
    fi
done

# What a newcomer sees: the bundled example's calls, and the skips reported.
grep -m1 '"calls":\[{' "$log" >/dev/null || { echo "fresh clone: the bundled example printed no calls" >&2; exit 1; }
summary="$(grep -m1 '^\.\./shared reference data:' "$log" || true)"
echo "fresh clone: ${summary:-no skip summary line}"
case "$summary" in
    *"SKIPPED because it is absent"*) ;;
    *) echo "fresh clone: the tests did not report their skips of ../shared" >&2; exit 1 ;;
esac
echo "fresh clone: $(grep -c '^SKIPPED ' "$log") skip messages; both README commands passed"
