#!/usr/bin/env bash
# Builds the git-ignored fuzz/corpus/<target>/ from the committed seeds,
# corpus/handmade/*, the real model outputs of corpus/real and corpus/streams,
# and ../shared/captures (when present).
#
# Every corpus file gets the header the target reads (see fuzz/src/lib.rs):
#   content_split, pythonic, json_repair: split header, then the input
#     \x00 = feed whole, \x40 = one byte at a time, \x86 = 7-byte chunks
#   sse, ndjson, provider: an options byte, then the split header, then the input
#     options \x00 = default frame limit / provider OpenAI; see each variant below.
#   limits: an options byte choosing tight limits (fuzz/src/lib.rs limits_from),
#     then the split header, then the input.
#   limits_any: seven bytes choosing any limits (fuzz/src/lib.rs limits_any),
#     then the split header, then the input.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
captures="${CAPTURES:-$root/../shared/captures}"
out="$here/corpus"

put() { # put TARGET NAME PREFIX(printf format) FILE
    mkdir -p "$out/$1"
    { printf "$3"; cat "$4"; } > "$out/$1/$2"
}

n=0
for f in "$here"/seeds/content/* "$root"/corpus/handmade/*; do
    [ -f "$f" ] || continue
    b=$(basename "$f")
    for t in content_split pythonic; do
        put $t "$b.whole" '\x00' "$f"
        put $t "$b.bytes" '\x40' "$f"
        put $t "$b.c7" '\x86' "$f"
    done
    n=$((n + 1))
done
# The project's real model outputs (corpus/real/*.jsonl): each entry's text,
# whole and in 7-byte chunks, for both content targets.
if command -v python3 >/dev/null; then
    python3 - "$root/corpus/real" "$out" <<'PY'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
for t in ("content_split", "pythonic"):
    os.makedirs(os.path.join(out, t), exist_ok=True)
k = 0
for name in sorted(os.listdir(src)):
    if not name.endswith(".jsonl"):
        continue
    for line in open(os.path.join(src, name), encoding="utf-8"):
        e = json.loads(line)
        text = e["text"].encode("utf-8")
        for t in ("content_split", "pythonic"):
            for tag, head in (("whole", b"\x00"), ("c7", b"\x86")):
                with open(os.path.join(out, t, f"real_{e['id']}.{tag}"), "wb") as f:
                    f.write(head + text)
        k += 1
print(f"seed.sh: {k} real corpus entries")
PY
fi
# Real llama.cpp-server SSE recordings (corpus/streams) for the stream targets.
for f in "$root"/corpus/streams/*.sse; do
    [ -f "$f" ] || continue
    b=$(basename "$f")
    put provider "real_$b.auto" '\x07\x00' "$f"
    put provider "real_$b.reparse.c5" '\x08\x84' "$f"
    put sse "real_$b.c3" '\x00\x82' "$f"
done
for f in "$here"/seeds/pythonic/*; do
    b=$(basename "$f")
    for t in pythonic content_split; do
        put $t "py_$b.whole" '\x00' "$f"
        put $t "py_$b.bytes" '\x40' "$f"
    done
    n=$((n + 1))
done
for f in "$here"/seeds/json/*; do
    b=$(basename "$f")
    put json_repair "$b.whole" '\x00' "$f"
    put json_repair "$b.bytes" '\x40' "$f"
    put json_repair "$b.c3" '\x82' "$f"
    n=$((n + 1))
done
# Tight limits over the content and JSON seeds: token 16 / depth 3 / arguments
# 40 / held 256 (\xaa), token 4 / depth 1 / arguments 16 / held 16 (\x00),
# token 8 / depth 8 / arguments 200 / held 256 (\xdd), whole and in 3-byte chunks.
for f in "$here"/seeds/content/* "$here"/seeds/pythonic/* "$here"/seeds/json/*; do
    b=$(basename "$(dirname "$f")")_$(basename "$f")
    put limits "$b.aa" '\xaa\x00' "$f"
    put limits "$b.00.c3" '\x00\x82' "$f"
    put limits "$b.dd.c3" '\xdd\x82' "$f"
done
# Any limits (limits_any: seven bytes, one per field; low three bits 0 = 0,
# 1 = 1, 2 = usize::MAX, 3 = default, 4-7 = small): all at 0, all at 1, all
# at usize::MAX, held 0 alone, arguments 1 and held usize::MAX, mixed.
for f in "$here"/seeds/content/* "$here"/seeds/pythonic/*; do
    b=$(basename "$(dirname "$f")")_$(basename "$f")
    put limits_any "$b.zero" '\x00\x00\x00\x00\x00\x00\x00\x00' "$f"
    put limits_any "$b.one.c3" '\x01\x01\x01\x01\x01\x01\x01\x82' "$f"
    put limits_any "$b.max.bytes" '\x02\x02\x02\x02\x02\x02\x02\x40' "$f"
    put limits_any "$b.held0" '\x03\x03\x00\x03\x03\x03\x03\x00' "$f"
    put limits_any "$b.mixed.c3" '\x2c\x01\x02\x24\x00\x0c\x54\x82' "$f"
done

# Provider index in decode_options: 0 openai, 1 responses, 2 anthropic,
# 3 ollama, 4 gemini, 5 cohere, 6 bedrock, 7 auto; +8 = re-parse content.
provider_opt() {
    case "$1" in
        anthropic*) echo 2 ;;
        *responses*|chatgpt_codex*) echo 1 ;;
        ollama*) echo 3 ;;
        gemini*|vertex*) echo 4 ;;
        cohere*) echo 5 ;;
        bedrock*) echo 6 ;;
        *) echo 0 ;;
    esac
}
if [ -d "$captures" ]; then
    for f in "$captures"/*.sse "$captures"/*.jsonl "$captures"/*.ndjson "$captures"/*.eventstream; do
        [ -f "$f" ] || continue
        # Keep the corpus small: libFuzzer sets -max_len from the largest corpus file.
        [ "$(wc -c < "$f")" -le 65536 ] || continue
        b=$(basename "$f")
        p=$(provider_opt "$b")
        put provider "$b.whole" "\\x0$p\\x00" "$f"
        put provider "$b.auto" '\x07\x00' "$f"
        put provider "$b.reparse.c5" "\\x$(printf %02x $((p + 8)))\\x84" "$f"
        case "$b" in
            *.sse)
                put sse "$b.whole" '\x00\x00' "$f"
                put sse "$b.c3" '\x00\x82' "$f"
                put sse "$b.small" '\x10\x00' "$f" ;;
            *.jsonl|*.ndjson)
                put ndjson "$b.whole" '\x00\x00' "$f"
                put ndjson "$b.c3" '\x00\x82' "$f"
                put ndjson "$b.small" '\x10\x00' "$f" ;;
        esac
        n=$((n + 1))
    done
else
    echo "seed.sh: $captures not found; stream targets get only their synthetic seeds" >&2
fi
# Small synthetic framing seeds, so the stream targets never start empty.
mkdir -p "$out/sse" "$out/ndjson" "$out/provider"
printf '\x00\x00\xef\xbb\xbfevent: ping\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: comment\n\nid: 7\nretry: 10\ndata: [DONE]\n\n' > "$out/sse/synthetic_crlf_bom"
printf '\x81\x40{"a":1}\r\n\n  \n{"b":2}' > "$out/ndjson/synthetic_bytes"
printf '\x00\x00data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\\"a\\":"}}]}}]}\n\ndata: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n' > "$out/provider/synthetic_openai"
for t in "$out"/*/; do
    echo "seed.sh: $(basename "$t"): $(ls "$t" | wc -l) files"
done
