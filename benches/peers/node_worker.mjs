// Long-lived worker for the npm peers: jsonrepair, partial-json, @ai-sdk-tool/parser.
//
// The Node harnesses in ../shared/peers read fd 0 and process.argv at module level, so they
// cannot be re-run in one process. This worker imports the libraries once and runs, per request,
// the SAME calls as those harnesses (js_jsonrepair.mjs, js_partial_json.mjs,
// js_ai_sdk_tool_parser.mjs), reusing their shared helpers (chunkText, timed, errStr) from
// ../shared/peers/_common.mjs, and answers with the same JSON object. compare.py checks on a few
// inputs that its answers equal the real harnesses' (results and ok/error), before it uses it.
//
// Request (one line): {"harness": "js_jsonrepair.mjs" | "js_partial_json.mjs" |
//   "js_ai_sdk_tool_parser.mjs", "input": str, "chunk": N, "repeat": K,
//   ai-sdk only: "protocol": "hermes", "start": str, "end": str, "tools": [OpenAI tools]}
// Answer (one line): {"out": {...harness JSON...}} or {"harness_error": "..."}.
//
// Usage: PEERS_NODE_DIR=... node node_worker.mjs SHARED_PEERS_DIR
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const C = await import(pathToFileURL(join(process.argv[2], '_common.mjs')).href);
const { require, pkgVersion, chunkText, timed, errStr } = C;
const { jsonrepair } = require('jsonrepair');
const { jsonrepairTransform } = require('jsonrepair/stream');
const pj = require('partial-json');
const P = require('@ai-sdk-tool/parser');
const versions = { jsonrepair: pkgVersion('jsonrepair'), 'partial-json': pkgVersion('partial-json'),
  '@ai-sdk-tool/parser': pkgVersion('@ai-sdk-tool/parser') };
const tick = () => new Promise((r) => setImmediate(r));

// ---- js_jsonrepair.mjs (whole: jsonrepair(s); chunks: jsonrepairTransform, default buffer sizes)
async function streamRepair(chunks) {
  const tr = jsonrepairTransform({});
  const pieces = [];
  let failure = null;
  tr.on('data', (d) => pieces.push(d.toString()));
  tr.on('error', (e) => { failure = e; });
  const ended = new Promise((resolve) => { tr.on('end', resolve); tr.on('error', resolve); });
  for (let i = 0; i < chunks.length && !failure; i++) { tr.write(chunks[i]); await tick(); }
  if (!failure) tr.end();
  await ended;
  if (failure) throw failure;
  return pieces.join('');
}
async function jsJsonrepair(q) {
  const out = { lib: 'jsonrepair (npm)', version: versions.jsonrepair, mode: q.chunk ? `stream(chunk=${q.chunk})` : 'whole' };
  let r;
  if (!q.chunk) r = await timed(() => jsonrepair(q.input), q.repeat);
  else {
    const chunks = chunkText(q.input, q.chunk, null);
    out.n_chunks = chunks.length;
    r = await timed(() => streamRepair(chunks), q.repeat);
  }
  out.ok = r.err === null;
  out.repaired_text = r.res;
  try { out.result = r.res === null ? null : JSON.parse(r.res); } catch (e) { out.result = null; out.result_parse_error = errStr(e); }
  out.error = errStr(r.err);
  out.timing_ms = r.stats;
  return out;
}

// ---- js_partial_json.mjs (parse(s, Allow.ALL); chunks: re-parse the accumulated prefix)
async function jsPartialJson(q) {
  const allow = pj.Allow.ALL;
  const out = { lib: 'partial-json (npm)', version: versions['partial-json'], mode: q.chunk ? 'chunked-reparse' : 'whole', allow: 'ALL' };
  let r;
  if (!q.chunk) r = await timed(() => pj.parse(q.input, allow), q.repeat);
  else {
    const chunks = chunkText(q.input, q.chunk, null);
    out.n_chunks = chunks.length;
    r = await timed(() => {
      let acc = '', v = null, lastErr = null;
      for (const c of chunks) {
        acc += c;
        try { v = pj.parse(acc, allow); lastErr = null; } catch (e) { lastErr = e; }
      }
      if (lastErr) throw lastErr;
      return v;
    }, q.repeat);
  }
  out.ok = r.err === null;
  out.result = r.res === undefined ? null : r.res;
  out.error = r.err ? `${r.err.constructor?.name || 'Error'}: ${r.err.message}` : null;
  out.timing_ms = r.stats;
  return out;
}

// ---- js_ai_sdk_tool_parser.mjs (protocol objects: parseGeneratedText / createStreamParser)
async function jsAiSdk(q) {
  const openaiTools = q.tools || [];
  const tools = openaiTools.map((x) => ({ type: 'function', name: x.function.name, description: x.function.description,
    inputSchema: x.function.parameters || { type: 'object', properties: {} } }));
  const protocolName = q.protocol || 'hermes';
  const makeProtocol = () => {
    switch (protocolName) {
      case 'hermes': { const o = {}; if (q.start) o.toolCallStart = q.start; if (q.end) o.toolCallEnd = q.end; return P.hermesProtocol(o); }
      case 'morph-xml': return P.morphXmlProtocol();
      case 'qwen3coder': return P.qwen3CoderProtocol();
      case 'yaml-xml': return P.yamlXmlProtocol();
      default: throw new Error(`unknown protocol ${protocolName}`);
    }
  };
  const onErrors = [];
  const options = { emitRawToolCallTextOnError: false,
    onError: (message, metadata) => onErrors.push({ message, dropReason: metadata?.dropReason }) };
  const argsOf = (s) => { try { return JSON.parse(s); } catch { return null; } };
  const whole = () => {
    const parts = makeProtocol().parseGeneratedText({ text: q.input, tools, options });
    const content = parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    const calls = parts.filter((p) => p.type === 'tool-call')
      .map((p, i) => ({ index: i, name: p.toolName, arguments_raw: p.input, arguments: argsOf(p.input) }));
    return { content: content || null, tool_calls: calls };
  };
  const stream = async (chunks) => {
    const ts = makeProtocol().createStreamParser({ tools, options });
    const writer = ts.writable.getWriter();
    const reader = ts.readable.getReader();
    const parts = [];
    const pump = (async () => { for (;;) { const { value, done } = await reader.read(); if (done) break; parts.push(value); } })();
    await writer.write({ type: 'stream-start', warnings: [] });
    for (const c of chunks) { await writer.write({ type: 'text-delta', id: 't', delta: c }); await tick(); }
    await writer.write({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' },
      usage: { inputTokens: { total: 0 }, outputTokens: { total: 0 } } });
    await writer.close();
    await pump;
    let content = '';
    const calls = [];
    for (const p of parts) {
      if (p.type === 'text-delta') content += p.delta;
      else if (p.type === 'tool-call') calls.push({ index: calls.length, name: p.toolName, arguments_raw: p.input, arguments: argsOf(p.input) });
    }
    return { content: content || null, tool_calls: calls };
  };
  const out = { lib: '@ai-sdk-tool/parser (npm)', version: versions['@ai-sdk-tool/parser'], protocol: protocolName,
    mode: q.chunk ? `stream(chunk=${q.chunk})` : 'whole', tools_source: 'given' };
  let r;
  if (!q.chunk) r = await timed(() => { onErrors.length = 0; return whole(); }, q.repeat);
  else {
    const chunks = chunkText(q.input, q.chunk, null);
    out.n_chunks = chunks.length;
    r = await timed(() => { onErrors.length = 0; return stream(chunks); }, q.repeat);
  }
  out.ok = r.err === null;
  out.result = r.res;
  out.on_error = onErrors;
  out.error = r.err ? errStr(r.err) : null;
  out.timing_ms = r.stats;
  return out;
}

const handlers = { 'js_jsonrepair.mjs': jsJsonrepair, 'js_partial_json.mjs': jsPartialJson, 'js_ai_sdk_tool_parser.mjs': jsAiSdk };
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let reply;
  try {
    const q = JSON.parse(line);
    q.repeat = q.repeat || 1;
    q.chunk = q.chunk || 0;
    const h = handlers[q.harness];
    if (!h) throw new Error(`unknown harness ${q.harness}`);
    reply = { out: await h(q) };
  } catch (e) {
    reply = { harness_error: String(e && e.stack || e) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
