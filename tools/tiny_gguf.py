#!/usr/bin/env python3
"""Writes a tiny random-weight llama model as a GGUF file, byte for byte the same on every machine.

The model checks the plumbing of a language-model client (sampling, seeds, grammars, token
accounting), not competence: its weights are uniform noise from a fixed splitmix64 stream, so its
answers are gibberish, but every llama.cpp-based server loads it and samples from it for real.

    tools/tiny_gguf.py OUT.gguf      write the model (about 4 MB); scripts/llm-local checks it
                                     against tools/tiny_gguf.sha256

Format: GGUF version 3 (ggml's gguf.md): a header, key-value metadata, tensor descriptors, then the
tensor data, each tensor aligned to 32 bytes; dimensions are written in ggml order (ne0 first, the
fastest-moving index), tensors are float32.

Architecture `llama`: 4 blocks of RMSNorm, multi-head attention with RoPE (4 heads of 32) and a
SwiGLU feed-forward of width 384; embedding width 128, untied output head.

Tokenizer `llama` (SentencePiece-style, scored merges with byte fallback): <unk>, <s>, </s>, the two
ChatML markers, the 256 byte tokens <0xNN>, every printable ASCII character, and a few common
English words with all their prefixes (the merge rule only builds a piece out of two pieces that
exist). The chat template is ChatML.
"""
import array
import os
import struct
import sys

ALIGNMENT = 32
N_EMBD, N_HEAD, N_LAYER, N_FF, N_CTX = 128, 4, 4, 384, 2048
SEED = 0x6E657870  # "nexp"

WORDS = """the of and to in is it that for you was on are with as be at this have from or one had by
word but not what all were we when your can said there use an each which she do how their if will up
other about out many then them these so some her would make like him into time has look two more
write go see number no way could people my than first water been call who its now find long down day
did get come made may part yes answer A B C D""".split()

CHAT_TEMPLATE = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
                 "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

# GGUF value types and token types.
T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY = 4, 5, 6, 7, 8, 9
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_BYTE = 1, 2, 3, 6
GGML_F32 = 0


def vocabulary():
    """(piece, score, type) for every token, in id order."""
    tokens = [("<unk>", 0.0, TOKEN_UNKNOWN), ("<s>", 0.0, TOKEN_CONTROL), ("</s>", 0.0, TOKEN_CONTROL),
              ("<|im_start|>", 0.0, TOKEN_CONTROL), ("<|im_end|>", 0.0, TOKEN_CONTROL)]
    tokens += [("<0x%02X>" % b, 0.0, TOKEN_BYTE) for b in range(256)]
    pieces = ["\u2581"] + [chr(c) for c in range(0x21, 0x7F)]
    for word in WORDS:
        for piece in ("\u2581" + word, word):
            for end in range(2, len(piece) + 1):
                pieces.append(piece[:end])
    seen = set()
    for piece in pieces:
        if piece in seen:
            continue
        seen.add(piece)
        # A longer piece wins a merge: the score grows with the length.
        tokens.append((piece, -1000.0 + 10.0 * len(piece) - 0.001 * len(seen), TOKEN_NORMAL))
    return tokens


class Noise:
    """splitmix64: a fixed, portable stream of uniform floats in [-1, 1)."""

    def __init__(self, seed):
        self.state = seed

    def uniform(self, n, scale):
        out = array.array("f", bytes(4 * n))
        mask = (1 << 64) - 1
        s = self.state
        for i in range(n):
            s = (s + 0x9E3779B97F4A7C15) & mask
            z = s
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
            z ^= z >> 31
            out[i] = scale * ((z >> 11) * (2.0 / (1 << 53)) - 1.0)
        self.state = s
        return out


def tensors(n_vocab):
    """(name, ggml dims, float32 data) in file order."""
    noise = Noise(SEED)
    ones = lambda n: array.array("f", [1.0] * n)
    # Uniform(-a, a) with a = sqrt(3 / fan_in) keeps activations at unit variance; the output head
    # is scaled so that logits spread with a standard deviation of about 2 (a peaked, not flat,
    # next-token distribution, so temperature matters).
    mat = lambda fan_in, fan_out, a=None: noise.uniform(fan_in * fan_out, a or (3.0 / fan_in) ** 0.5)
    out = [("token_embd.weight", [N_EMBD, n_vocab], noise.uniform(N_EMBD * n_vocab, 1.0))]
    for i in range(N_LAYER):
        b = "blk.%d." % i
        out += [(b + "attn_norm.weight", [N_EMBD], ones(N_EMBD)),
                (b + "attn_q.weight", [N_EMBD, N_EMBD], mat(N_EMBD, N_EMBD)),
                (b + "attn_k.weight", [N_EMBD, N_EMBD], mat(N_EMBD, N_EMBD)),
                (b + "attn_v.weight", [N_EMBD, N_EMBD], mat(N_EMBD, N_EMBD)),
                (b + "attn_output.weight", [N_EMBD, N_EMBD], mat(N_EMBD, N_EMBD)),
                (b + "ffn_norm.weight", [N_EMBD], ones(N_EMBD)),
                (b + "ffn_gate.weight", [N_EMBD, N_FF], mat(N_EMBD, N_FF)),
                (b + "ffn_up.weight", [N_EMBD, N_FF], mat(N_EMBD, N_FF)),
                (b + "ffn_down.weight", [N_FF, N_EMBD], mat(N_FF, N_EMBD))]
    out += [("output_norm.weight", [N_EMBD], ones(N_EMBD)),
            ("output.weight", [N_EMBD, n_vocab], mat(N_EMBD, n_vocab, (12.0 / N_EMBD) ** 0.5))]
    return out


# ---------------------------------------------------------------- encoding

def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def gguf_value(kind, value):
    if kind == T_UINT32:
        return struct.pack("<I", value)
    if kind == T_INT32:
        return struct.pack("<i", value)
    if kind == T_FLOAT32:
        return struct.pack("<f", value)
    if kind == T_BOOL:
        return struct.pack("<?", value)
    if kind == T_STRING:
        return gguf_string(value)
    raise ValueError(kind)


def gguf_kv(key, kind, value, element=None):
    body = gguf_string(key) + struct.pack("<I", kind)
    if kind == T_ARRAY:
        body += struct.pack("<IQ", element, len(value)) + b"".join(gguf_value(element, v) for v in value)
    else:
        body += gguf_value(kind, value)
    return body


def metadata(vocab):
    kv = [("general.architecture", T_STRING, "llama"),
          ("general.name", T_STRING, "nexp-tiny-random"),
          ("general.file_type", T_UINT32, 0),
          ("general.alignment", T_UINT32, ALIGNMENT),
          ("llama.vocab_size", T_UINT32, len(vocab)),
          ("llama.context_length", T_UINT32, N_CTX),
          ("llama.embedding_length", T_UINT32, N_EMBD),
          ("llama.block_count", T_UINT32, N_LAYER),
          ("llama.feed_forward_length", T_UINT32, N_FF),
          ("llama.attention.head_count", T_UINT32, N_HEAD),
          ("llama.attention.head_count_kv", T_UINT32, N_HEAD),
          ("llama.rope.dimension_count", T_UINT32, N_EMBD // N_HEAD),
          ("llama.rope.freq_base", T_FLOAT32, 10000.0),
          ("llama.attention.layer_norm_rms_epsilon", T_FLOAT32, 1e-5),
          ("tokenizer.ggml.model", T_STRING, "llama"),
          ("tokenizer.ggml.unknown_token_id", T_UINT32, 0),
          ("tokenizer.ggml.bos_token_id", T_UINT32, 1),
          ("tokenizer.ggml.eos_token_id", T_UINT32, 2),
          ("tokenizer.ggml.add_bos_token", T_BOOL, True),
          ("tokenizer.ggml.add_eos_token", T_BOOL, False),
          ("tokenizer.chat_template", T_STRING, CHAT_TEMPLATE)]
    out = [gguf_kv(k, t, v) for k, t, v in kv]
    out.append(gguf_kv("tokenizer.ggml.tokens", T_ARRAY, [p for p, _, _ in vocab], T_STRING))
    out.append(gguf_kv("tokenizer.ggml.scores", T_ARRAY, [s for _, s, _ in vocab], T_FLOAT32))
    out.append(gguf_kv("tokenizer.ggml.token_type", T_ARRAY, [t for _, _, t in vocab], T_INT32))
    return out


def pad(n):
    return (ALIGNMENT - n % ALIGNMENT) % ALIGNMENT


def model_bytes():
    vocab = vocabulary()
    kvs = metadata(vocab)
    ts = tensors(len(vocab))
    infos, offset = [], 0
    for name, dims, data in ts:
        infos.append(gguf_string(name) + struct.pack("<I", len(dims)) +
                     b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", GGML_F32, offset))
        offset += 4 * len(data) + pad(4 * len(data))
    head = b"GGUF" + struct.pack("<IQQ", 3, len(ts), len(kvs)) + b"".join(kvs) + b"".join(infos)
    parts = [head, b"\0" * pad(len(head))]
    for _, _, data in ts:
        if sys.byteorder != "little":
            data.byteswap()
        raw = data.tobytes()
        parts += [raw, b"\0" * pad(len(raw))]
    return b"".join(parts)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: tiny_gguf.py OUT.gguf\n")
        return 2
    with open(argv[1] + ".tmp", "wb") as f:
        f.write(model_bytes())
    os.replace(argv[1] + ".tmp", argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
