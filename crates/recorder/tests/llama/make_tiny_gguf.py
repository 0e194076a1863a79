"""Writes a tiny random-weight llama GGUF model for the recorder's real-server test.

Usage: python make_tiny_gguf.py OUT.gguf [SEED]

The model is a 2-layer llama (64-wide, 4 heads) with a SentencePiece-style vocabulary of
control tokens, the 256 byte tokens and ~150 word pieces, plus a chat template, so that
llama.cpp (and llama-cpp-python's OpenAI-compatible server) loads it and streams tokens at
CPU speed. Its answers are random words: the test measures timing and stream shape, not text.
The output rows of the control and byte tokens are zero, so with the server's default top-k
the end-of-sequence token is never sampled and every answer runs to max_tokens
(finish_reason "length"); a request can be made long by asking for many tokens.
"""

import sys

import gguf
import numpy as np

N_EMBD = 64
N_HEAD = 4
N_LAYER = 2
N_FF = 128
N_CTX = 8192

WORDS = (
    "the of and to in is was for on that with as by at from his her they this which or had are but not be "
    "have one were all we when there can an been has more if will would who so no out up time into only "
    "new some could these two may first then do any like my now over such our man me even most made after "
    "also did many before must through back years where much your way well down should because each just "
    "those people how too little state good very make world still own see men work long get here between "
    "both life being under never day same another know while last might us great old year off come since "
    "against go came right used take three"
).split()


def vocabulary():
    tokens = ["<unk>", "<s>", "</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    pieces = ["\u2581"] + [f"\u2581{w}" for w in WORDS] + list("abcdefghijklmnopqrstuvwxyz.,!?")
    seen = set()
    for p in pieces:
        if p not in seen:
            seen.add(p)
            tokens.append(p)
            types.append(gguf.TokenType.NORMAL)
    scores = [0.0] * len(tokens)
    for i, t in enumerate(tokens):
        if types[i] == gguf.TokenType.NORMAL:
            scores[i] = -float(i) / 100.0 + len(t)  # longer pieces first
    return tokens, scores, types


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    rng = np.random.default_rng(seed)
    tokens, scores, types = vocabulary()
    n_vocab = len(tokens)

    w = gguf.GGUFWriter(out, "llama")
    w.add_name("tracelab-tiny-random")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(
        "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )

    def rand(*shape, scale=0.02):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w.add_tensor("token_embd.weight", rand(n_vocab, N_EMBD, scale=1.0))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", rand(N_EMBD, N_EMBD))
        w.add_tensor(p + "attn_k.weight", rand(N_EMBD, N_EMBD))
        w.add_tensor(p + "attn_v.weight", rand(N_EMBD, N_EMBD))
        w.add_tensor(p + "attn_output.weight", rand(N_EMBD, N_EMBD))
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", rand(N_FF, N_EMBD))
        w.add_tensor(p + "ffn_up.weight", rand(N_FF, N_EMBD))
        w.add_tensor(p + "ffn_down.weight", rand(N_EMBD, N_FF))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    # Word pieces get logits spread ~N(0, 3); control and byte tokens a logit of 0, below the
    # top-k (40) of ~200 pieces, so they are never sampled.
    output = rand(n_vocab, N_EMBD, scale=3.0 / np.sqrt(N_EMBD) * 1.0)
    for i, t in enumerate(types):
        if t != gguf.TokenType.NORMAL:
            output[i] = 0.0
    w.add_tensor("output.weight", output)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
