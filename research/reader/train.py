"""Train the reader: a 4-6-layer e5 student with a head on (question, window), on pairs.py's pairs.

Run (research venv, niced, wall time capped, checkpoints to /tmp/reader/):
  cd research/reader && nice -n 15 /tmp/reader/venv/bin/python train.py --pairs /tmp/reader/pairs.jsonl \
      --layers 4 --train-top 2 --max-len 192 --minutes 20 --out /tmp/reader/reader.pt [--leave-out SET]

The bottom layers and the embeddings stay frozen; the top ``--train-top`` layers and the head learn.
Anchors (not pairs) are split 90/10, so the held-out AUC is on questions the model never saw.
"""

from __future__ import annotations

import argparse
import random
import time
import zlib
from pathlib import Path

import torch
from e5torch import CrossEncoder, jsonl, load_e5, pad
from torch import nn


def auc(scores: list[float], labels: list[int]) -> float:
    """Rank AUC (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y == 1]
    neg = [s for s, y in zip(scores, labels, strict=True) if y == 0]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def held(r: dict) -> bool:
    """One anchor in ten is held out, by a stable hash of its question and document."""
    key = f"{r['set']}|{r['doc_id']}|{r['question']}".encode()
    return zlib.crc32(key) % 10 == 0


def split(rows: list[dict], leave_out: str | None) -> tuple[list[dict], list[dict]]:
    train = [r for r in rows if not held(r) and r["set"] != leave_out]
    val = [r for r in rows if held(r) or r["set"] == leave_out]
    return train, val


def scores_of(model: CrossEncoder, enc: list[list[int]], batch: int = 16) -> list[float]:
    model.eval()
    out: list[float] = []
    with torch.no_grad():
        for i in range(0, len(enc), batch):
            ids, lengths = pad(enc[i : i + batch])
            out += model(ids, lengths).tolist()
    model.train()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pairs", default="/tmp/reader/pairs.jsonl", help="comma-separated files")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--train-top", type=int, default=2)
    ap.add_argument("--max-len", type=int, default=192)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--leave-out", default=None)
    ap.add_argument("--lr", type=float, default=3e-5, help="learning rate of the trained encoder layers")
    ap.add_argument(
        "--threads", type=int, default=1, help="2 spins on a crowded machine; 1 runs faster there"
    )
    ap.add_argument("--out", default="/tmp/reader/reader.pt")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    tok, enc = load_e5(args.layers)
    model = CrossEncoder(enc)
    for p in model.encoder.parameters():
        p.requires_grad = False
    for layer in model.encoder.layers[args.layers - args.train_top :]:
        for p in layer.parameters():
            p.requires_grad = True
    opt = torch.optim.AdamW(
        [
            {"params": [p for p in model.encoder.parameters() if p.requires_grad], "lr": args.lr},
            {"params": model.head.parameters(), "lr": 1e-3},
        ],
        weight_decay=0.01,
    )
    loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(2.0))
    rng = random.Random(1)
    t0 = time.time()
    step = 0
    seen: dict[str, list[tuple[list[int], int]]] = {}
    epoch_of: dict[str, int] = {}
    todo: list[tuple[list[int], int]] = []
    while time.time() - t0 < args.minutes * 60:
        # pair files still being written by pairs.py are picked up as they appear
        for path in args.pairs.split(","):
            if path not in seen and Path(path).exists() and Path(path).stat().st_size > 0:
                rows, _ = split(jsonl(path), args.leave_out)
                seen[path] = [(tok.pair(r["question"], r["window"], args.max_len), r["label"]) for r in rows]
                epoch_of[path] = 0
                todo += seen[path]
                rng.shuffle(todo)
                print(
                    f"{path}: {len(seen[path])} training pairs added at {time.time() - t0:.0f}s", flush=True
                )
        if not todo:
            if not seen:
                time.sleep(10)
                continue
            if min(epoch_of.values()) + 1 >= args.epochs:
                break
            for path in seen:
                epoch_of[path] += 1
                todo += seen[path]
            rng.shuffle(todo)
        chunk, todo = todo[: args.batch], todo[args.batch :]
        ids, lengths = pad([s for s, _ in chunk])
        loss = loss_fn(model(ids, lengths), torch.tensor([float(y) for _, y in chunk]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 25 == 0:
            print(f"step {step} loss {loss.item():.3f} {time.time() - t0:.0f}s", flush=True)
            torch.save(
                {"state": model.state_dict(), "layers": args.layers, "max_len": args.max_len}, args.out
            )
    train_s = time.time() - t0
    torch.save({"state": model.state_dict(), "layers": args.layers, "max_len": args.max_len}, args.out)
    rows = [r for path in seen for r in jsonl(path)]
    val = split(rows, args.leave_out)[1]
    va = [tok.pair(r["question"], r["window"], args.max_len) for r in val]
    print(f"pairs: {len(rows)} in {len(seen)} files, {len(val)} held out", flush=True)
    s = scores_of(model, va)
    labels = [r["label"] for r in val]
    print(
        f"trained {step} steps ({step * args.batch} pairs seen) in {train_s:.0f}s; "
        f"held-out AUC {auc(s, labels):.3f}"
    )
    for name in sorted({r["set"] for r in val}):
        idx = [i for i, r in enumerate(val) if r["set"] == name]
        print(
            f"  {name}: held-out AUC {auc([s[i] for i in idx], [labels[i] for i in idx]):.3f} "
            f"({len(idx)} pairs)"
        )
    for neg in ("same_doc", "neighbour"):
        idx = [i for i, r in enumerate(val) if r["neg"] in ("pos", neg)]
        print(f"  positives vs {neg}: AUC {auc([s[i] for i in idx], [labels[i] for i in idx]):.3f}")


if __name__ == "__main__":
    main()
