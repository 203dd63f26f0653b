"""Score the loop's selected evidence with the reader, then the AUC table and the judge refit.

0. python score_sets.py subsets --sets tara_zh,emanual_en_reject  (120 answer + 120 refuse questions
   per set, seed 25, beside a link to the set's corpus, in /tmp/reader/sets/SET)
1. Results per set come from the loop (project venv, niced, once per set):
     OMP_NUM_THREADS=1 PYTHONPATH=$PWD nice -n 15 /work/main/.venv/bin/python -m
     evidence_loop.agent.doors.cli.app \
         eval /tmp/reader/sets/SET --out-dir /tmp/reader/eval/SET --no-progress
2. Reader scores (research venv):
     cd research/reader && nice -n 15 /tmp/reader/venv/bin/python score_sets.py score \
         --ckpt /tmp/reader/reader.pt \
         --sets tara_zh,rgb_zh_reject,emanual_en_reject --limit 300 --tag main
   reads the evidence of each question grouped by document (the loop's selected windows, lead first; the
   first --windows documents, each cut to the reader's max length), and
   writes /tmp/reader/scores_TAG_SET.jsonl (expect, recorded signals, reader logit of each window).
3. The table: python score_sets.py table --tag main
   AUC of answerable vs unanswerable for the reader (lead document's window), the e5 cosine
   (signals.semantic), the current judge (signals.judge), and logistic refits over the recorded
   signals without and with the reader, each fitted on the other sets (features z-scored within
   each set, as the judge z-scores against its corpus's own scale) and scored on the left-out set.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
from e5torch import jsonl
from train import auc

FEATURES = ("relevance", "bm25", "coverage", "slot_coverage", "boundary", "score", "semantic")
EVAL = "/work/shared/eval"


def score(args: argparse.Namespace) -> None:
    import torch
    from e5torch import CrossEncoder, load_e5, pad

    torch.set_num_threads(2)
    ck = torch.load(args.ckpt)
    tok, enc = load_e5(ck["layers"])
    model = CrossEncoder(enc)
    model.load_state_dict(ck["state"])
    model.eval()
    for name in args.sets.split(","):
        qs = {q["id"]: q for q in jsonl(f"{EVAL}/{name}/questions.jsonl")}
        res = jsonl(f"/tmp/reader/eval/{name}/" + args.results.format(set=name))
        res = [r for r in res if qs[r["id"]]["expect"] in ("answer", "refuse")]
        random.Random(0).shuffle(res)
        res = res[: args.limit]
        t0 = time.time()
        with open(f"/tmp/reader/scores_{args.tag}_{name}.jsonl", "w", encoding="utf-8") as f:
            for r in res:
                q = qs[r["id"]]
                if args.pieces:  # the lead document's evidence pieces, each read on its own
                    lead = r["evidence"][0]["doc_id"] if r["evidence"] else None
                    wins = [e["text"] for e in r["evidence"] if e["doc_id"] == lead][: args.windows]
                else:
                    wins = by_document(r["evidence"])[: args.windows]
                logits: list[float] = []
                if wins:
                    with torch.no_grad():
                        ids, lengths = pad([tok.pair(q["question"], w, ck["max_len"]) for w in wins])
                        logits = model(ids, lengths).tolist()
                row = {
                    "id": r["id"],
                    "expect": q["expect"],
                    "status": r["status"],
                    "signals": r["signals"],
                    "reader": logits,
                }
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{name}: {len(res)} questions scored in {time.time() - t0:.0f}s", flush=True)


def subsets(args: argparse.Namespace) -> None:
    for name in args.sets.split(","):
        d = Path(f"/tmp/reader/sets/{name}")
        d.mkdir(parents=True, exist_ok=True)
        if not (d / "corpus.jsonl").exists():
            (d / "corpus.jsonl").symlink_to(f"{EVAL}/{name}/corpus.jsonl")
        qs = jsonl(f"{EVAL}/{name}/questions.jsonl")
        rng = random.Random(25)
        a = [q for q in qs if q["expect"] == "answer"]
        r = [q for q in qs if q["expect"] == "refuse"]
        rng.shuffle(a)
        rng.shuffle(r)
        lines = [json.dumps(q, ensure_ascii=False) for q in a[:120] + r[:120]]
        (d / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def by_document(evidence: list[dict]) -> list[str]:
    """The evidence as the loop selected it, one text per document (its pieces in order), lead first."""
    groups: dict[str, list[str]] = {}
    for e in evidence:
        groups.setdefault(e["doc_id"], []).append(e["text"])
    return ["\n".join(parts) for parts in groups.values()]


def fit_lr(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """Weighted, ridge-penalised logistic regression by Newton steps; returns [bias, weights...]."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(xb.shape[1])
    pen = np.eye(xb.shape[1]) * l2
    pen[0, 0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-xb @ beta))
        grad = xb.T @ (w * (p - y)) + pen @ beta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + pen
        beta -= np.linalg.solve(hess, grad)
    return beta


def load_set(
    tag: str, name: str, agg: str = "lead"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rows = jsonl(f"/tmp/reader/scores_{tag}_{name}.jsonl")
    y = np.array([1.0 if r["expect"] == "answer" else 0.0 for r in rows])
    feats = np.array([[_num(r["signals"].get(f)) for f in FEATURES] for r in rows])
    # the lead document's window speaks for the evidence, as the lead window does for the judge
    pick = max if agg == "max" else (lambda v: v[0])
    reader = np.array([pick(r["reader"]) if r["reader"] else -10.0 for r in rows])
    cos = np.array([_num(r["signals"].get("semantic")) for r in rows])
    judge = np.array([_num(r["signals"].get("judge")) for r in rows])
    return y, _z(feats), _z(reader[:, None]), cos, judge


def _num(v: object) -> float:
    return float(v) if isinstance(v, int | float) and not math.isnan(float(v)) else 0.0


def _z(a: np.ndarray) -> np.ndarray:
    return (a - a.mean(0)) / (a.std(0) + 1e-9)


def table(args: argparse.Namespace) -> None:
    names = args.sets.split(",")
    data = {n: load_set(args.tag, n, args.agg) for n in names}
    print(
        "| set | questions (answer/refuse) | reader | e5 cosine | judge (shipped) | refit | refit + reader |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in names:
        y, f, r, cos, judge = data[n]
        others = [m for m in names if m != n]
        out = []
        for with_reader in (False, True):
            xs = [np.hstack([data[m][1], data[m][2]]) if with_reader else data[m][1] for m in others]
            ys = [data[m][0] for m in others]
            ws = [np.full(len(v), 1.0 / len(v)) * 1000 for v in ys]
            beta = fit_lr(np.vstack(xs), np.concatenate(ys), np.concatenate(ws))
            x = np.hstack([f, r]) if with_reader else f
            out.append(auc(list(x @ beta[1:]), list(y.astype(int))))
        yi = list(y.astype(int))
        print(
            f"| {n} | {len(y)} ({int(y.sum())}/{int(len(y) - y.sum())}) | {auc(list(r[:, 0]), yi):.3f} "
            f"| {auc(list(cos), yi):.3f} | {auc(list(judge), yi):.3f} | {out[0]:.3f} "
            f"| {out[1]:.3f} ({out[1] - out[0]:+.3f}) |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("mode", choices=("subsets", "score", "table"))
    ap.add_argument("--ckpt", default="/tmp/reader/reader.pt")
    ap.add_argument("--sets", default="tara_zh,rgb_zh_reject,emanual_en_reject")
    ap.add_argument(
        "--results", default="{set}-adaptive.jsonl", help="results file name in /tmp/reader/eval/SET/"
    )
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--tag", default="main")
    ap.add_argument("--pieces", action="store_true", help="read the lead document's pieces one by one")
    ap.add_argument("--agg", choices=("lead", "max"), default="lead", help="table: which reader score")
    args = ap.parse_args()
    {"subsets": subsets, "score": score, "table": table}[args.mode](args)


if __name__ == "__main__":
    main()
