"""Does reviewers' feedback tune the judge? The acceptance measurement of ``calibrate --feedback``.

    .venv/bin/python benchmarks/measure_feedback.py [--work DIR] [--sets rgb_zh_reject,...] [--phase all]

For each set (default rgb_zh_reject, emanual_en_reject, tara_zh under EVLOOP_EVAL_DIR or
../shared/eval beside the clone):

1. ``runs``: ingest the corpus into WORK/SET/index and measure its own scale (``calibrate --self``), start
   ``evloop serve`` with the shipped policy and ask every question through ``POST /v1/ask``; each
   run's id and status goes to WORK/SET/runs.jsonl, so a second invocation only asks what is missing;
2. ``review``: split the questions in two halves (by a hash of their id); for the first half post a
   simulated review to ``POST /v1/runs/{run_id}/feedback`` from the item's ``expect`` (correct when
   the outcome matches, else should_have_refused / should_have_answered);
3. ``score``: run ``evloop calibrate --feedback`` on the set's traces (all reviews; its report goes to
   stderr and its policy to WORK/SET/policy.json), then fit on the first 50, 100, 200, 400 and all
   reviews (posting order, as ``calibrate --feedback`` reads them) and score the held-out half with
   each fitted judge applied to the signals its runs recorded (nothing asked again; a run refused
   for another missing piece stays refused, as ``agent.tuning.feedback_fit.decided`` says). Without
   ``--answer-rate`` each fit takes the point ``calibrate --feedback`` would
   (``agent.tuning.feedback_choice``:
   the rate whose cross-validated gain holds up, else the current policy, shown as rate "kept").

Prints one table: answer rate, refusal rate and correct outcomes of the held-out half under the
shipped policy, always answering, and each fit. Run it nice'd: the first phase asks every question.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx
from load_api import free_port

from evidence_loop.agent.tuning.evaluate import read_questions
from evidence_loop.agent.tuning.feedback_choice import choose, curve
from evidence_loop.agent.tuning.feedback_fit import ReviewedRun, decided, fit_feedback, judged
from evidence_loop.agent.tuning.feedback_reviews import reviews
from evidence_loop.policies.judge_model import JudgeModel
from evidence_loop.traces import TraceStore

EVAL_DIR = Path(os.environ.get("EVLOOP_EVAL_DIR") or Path(__file__).resolve().parents[2] / "shared" / "eval")
SETS = ("rgb_zh_reject", "emanual_en_reject", "tara_zh")
HOST = "127.0.0.1"
CLI = [sys.executable, "-m", "evidence_loop.agent.doors.cli.app"]
REVIEW_COUNTS = (50, 100, 200, 400)
EXPECTED = {"answer": "answered", "refuse": "insufficient_evidence", "conflict": "conflicting_evidence"}


def reviewed_half(question_id: str) -> bool:
    """Whether a question's run is reviewed (True) or held out for scoring (False): a fixed split."""
    return hashlib.sha256(question_id.encode("utf-8")).digest()[0] % 2 == 0


def read_runs(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["id"]] = row
    return rows


class Server:
    """``evloop serve`` on a free loopback port for the life of a ``with`` block."""

    def __init__(self, work: Path, extra: Iterable[str] = ()) -> None:
        self.work, self.extra = work, list(extra)

    def __enter__(self) -> httpx.Client:
        port = free_port()
        command = [*CLI, "serve", "--index", str(self.work / "index"), "--traces", str(self.work / "traces")]
        command += [*self.extra, "--host", HOST, "--port", str(port), "--quiet"]
        log = (self.work / "serve.log").open("ab")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        self.client = httpx.Client(base_url=f"http://{HOST}:{port}", timeout=120)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if self.client.get("/readyz", timeout=2).status_code == 200:
                    return self.client
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        self.process.kill()
        raise SystemExit(f"the server did not start; see {self.work / 'serve.log'}")

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.process.terminate()
        self.process.wait(timeout=60)


def make_runs(set_dir: Path, work: Path) -> None:
    """Ask every question not yet asked and log its run."""
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "ingested").exists():
        # the corpus and its own scale (which the judge needs), as `evloop serve` will find them
        if not (work / "index").exists():
            corpus = str(set_dir / "corpus.jsonl")
            subprocess.run([*CLI, "ingest", corpus, "--index", str(work / "index")], check=True)
        subprocess.run([*CLI, "calibrate", "--self", "--index", str(work / "index")], check=True)
        (work / "ingested").touch()
    out_path = work / "runs.jsonl"
    done = read_runs(out_path)
    todo = [q for q in read_questions(set_dir / "questions.jsonl") if q["id"] not in done]
    if not todo:
        return
    with Server(work) as client, out_path.open("a", encoding="utf-8") as out:
        for n, q in enumerate(todo, 1):
            body: dict[str, Any] = {"question": q["question"]}
            if q.get("groups"):
                body["groups"] = q["groups"]
            reply = client.post("/v1/ask", json=body)
            reply.raise_for_status()
            outcome = reply.json()
            row = {
                "id": q["id"],
                "expect": q["expect"],
                "run_id": outcome["run_id"],
                "status": outcome["status"],
            }
            out.write(json.dumps(row) + "\n")
            out.flush()
            if n % 100 == 0:
                print(f"{set_dir.name}: {n}/{len(todo)} asked", file=sys.stderr, flush=True)


def simulated_verdict(expect: str, status: str) -> str:
    """What a reviewer who knows the item's ``expect`` says about a run that ended in ``status``."""
    if status == EXPECTED[expect]:
        return "correct"
    if expect == "conflict":
        return "missed_conflict"
    if status == "conflicting_evidence" and expect == "answer":
        return "false_conflict"
    return "should_have_answered" if expect == "answer" else "should_have_refused"


def review_order(question_id: str) -> str:
    return hashlib.sha256(b"review:" + question_id.encode("utf-8")).hexdigest()


def post_reviews(work: Path) -> None:
    """Post a simulated review for every run of the reviewed half not yet reviewed, in a fixed order."""
    runs = read_runs(work / "runs.jsonl")
    done = read_runs(work / "reviews.jsonl")
    todo = sorted(
        (r for q, r in runs.items() if reviewed_half(q) and q not in done),
        key=lambda r: review_order(r["id"]),
    )
    if not todo:
        return
    with Server(work) as client, (work / "reviews.jsonl").open("a", encoding="utf-8") as out:
        for row in todo:
            verdict = simulated_verdict(row["expect"], row["status"])
            reply = client.post(f"/v1/runs/{row['run_id']}/feedback", json={"verdict": verdict})
            reply.raise_for_status()
            out.write(json.dumps({"id": row["id"], "run_id": row["run_id"], "verdict": verdict}) + "\n")
            out.flush()


def calibrate_cli(work: Path, rate: float | None) -> str:
    """``evloop calibrate --feedback`` on the set's traces, the fitted policy to WORK/policy.json."""
    command = [
        *CLI,
        "calibrate",
        "--feedback",
        "--traces",
        str(work / "traces"),
        "--index",
        str(work / "index"),
    ]
    command += ["--out", str(work / "policy.json")] + (["--answer-rate", str(rate)] if rate else [])
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def held_out(work: Path, store: TraceStore) -> list[tuple[str, ReviewedRun | None, str]]:
    """(expect, the run as the judge reads it or None when the judge did not sit, recorded status)."""
    rows = []
    for q, row in sorted(read_runs(work / "runs.jsonl").items()):
        if not reviewed_half(q):
            trace = store.read(row["run_id"])
            rows.append((row["expect"], judged(trace, True), row["status"]))
    return rows


def figures(statuses: list[str], expects: list[str]) -> tuple[float, float, float]:
    """Answer rate, refusal rate and correct share of outcomes against the items' ``expect``."""
    pos = [s == "answered" for s, e in zip(statuses, expects, strict=True) if e == "answer"]
    neg = [s == "insufficient_evidence" for s, e in zip(statuses, expects, strict=True) if e == "refuse"]
    right = sum(EXPECTED[e] == s for s, e in zip(statuses, expects, strict=True))
    return sum(pos) / max(len(pos), 1), sum(neg) / max(len(neg), 1), right / len(statuses)


def rescored(model: JudgeModel, rate: float, rows: list[tuple[str, ReviewedRun | None, str]]) -> list[str]:
    threshold = model.threshold(rate)
    return [decided(model, threshold, run) if run is not None else status for _, run, status in rows]


def score(name: str, work: Path, fixed: float | None) -> list[str]:
    """Table lines for one set: the shipped policy, always answering, and each fit on its held-out
    half, at ``fixed`` or at the rate each fit chooses (the best cross-validated correct share)."""
    print(calibrate_cli(work, fixed), file=sys.stderr)
    store = TraceStore(work / "traces")
    reviewed = reviews(store).runs
    rows = held_out(work, store)
    expects = [e for e, _, _ in rows]
    lines = [_line(name, "shipped policy", "-", "-", figures([s for _, _, s in rows], expects))]
    lines.append(_line(name, "always answer", "-", "-", figures(["answered"] * len(rows), expects)))
    for n in [*(c for c in REVIEW_COUNTS if c < len(reviewed)), len(reviewed)]:
        first = reviewed[:n]
        if sum(r.answerable for r in first) < 5 or sum(not r.answerable for r in first) < 5:
            lines.append(f"| {name} | fit on {n} reviews | {n} | too few of one kind | | | |")
            continue
        rate = fixed if fixed is not None else choose(curve(first)).rate
        # rate None: the fit's gain does not hold up, the current policy is kept
        kept = [s for _, _, s in rows]
        statuses = kept if rate is None else rescored(fit_feedback(first), rate, rows)
        shown = "kept" if rate is None else f"{rate:g}"
        lines.append(_line(name, f"fit on {n} reviews", str(n), shown, figures(statuses, expects)))
    return lines


def _line(name: str, what: str, reviews: str, rate: str, fig: tuple[float, float, float]) -> str:
    return f"| {name} | {what} | {reviews} | {rate} | {fig[0]:.3f} | {fig[1]:.3f} | {fig[2]:.3f} |"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/evloop-feedback"))
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--phase", choices=("runs", "review", "score", "all"), default="all")
    parser.add_argument(
        "--answer-rate",
        type=float,
        default=None,
        help="the fits' operating point (default: each fit chooses)",
    )
    args = parser.parse_args()
    names = [s for s in args.sets.split(",") if s]
    table = []
    for name in names:
        work = args.work / name
        if args.phase in ("runs", "all"):
            make_runs(EVAL_DIR / name, work)
        if args.phase in ("review", "all"):
            post_reviews(work)
        if args.phase in ("score", "all"):
            table += score(name, work, args.answer_rate)
    if table:
        print(
            "held-out half of each set, scored on the signals its runs recorded; "
            f"fits at answer rate {args.answer_rate or 'each fit chooses'}"
        )
        print("| set | policy | reviews | rate | answer | refusal | correct |\n|---|---|---|---|---|---|---|")
        print("\n".join(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
