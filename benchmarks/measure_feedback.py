"""Does reviewers' feedback tune the judge? The acceptance measurement of ``calibrate --feedback``.

    .venv/bin/python benchmarks/measure_feedback.py [--work DIR] [--sets rgb_zh_reject,...] [--phase all]

For each set (default rgb_zh_reject, emanual_en_reject, tara_zh under EVLOOP_EVAL_DIR or
../shared/eval beside the clone):

1. ``runs``: ingest the corpus into WORK/SET/index (ingest measures the corpus's own scale), start
   ``evloop serve`` with the shipped policy and ask every question through ``POST /v1/ask``; each
   run's id and status goes to WORK/SET/runs.jsonl, so a second invocation only asks what is missing;
2. ``review``: split the questions in two halves (by a hash of their id); for the first half post a
   simulated review to ``POST /v1/runs/{run_id}/feedback`` from the item's ``expect`` (correct when
   the outcome matches, else should_have_refused / should_have_answered);
3. ``score``: for 50, 100, 200, 400 and all reviews, run ``evloop calibrate --feedback`` on the traces
   (the first N reviews by posting order, the rest ignored by --limit) and score the held-out half
   with the fitted judge applied to the signals its runs recorded; for all reviews the held-out half
   is also asked again through ``serve --policy-file`` and scored from the new outcomes.

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

from evidence_loop.agent.evaluate import read_questions

EVAL_DIR = Path(os.environ.get("EVLOOP_EVAL_DIR") or Path(__file__).resolve().parents[2] / "shared" / "eval")
SETS = ("rgb_zh_reject", "emanual_en_reject", "tara_zh")
HOST = "127.0.0.1"
CLI = [sys.executable, "-m", "evidence_loop.agent.cli"]
REVIEW_COUNTS = (50, 100, 200, 400)


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


def make_runs(set_dir: Path, work: Path, runs_name: str = "runs.jsonl", extra: Iterable[str] = ()) -> None:
    """Ask every question not yet asked (or, with ``extra``, only the held-out half) and log its run."""
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "index").exists():
        subprocess.run(
            [*CLI, "ingest", str(set_dir / "corpus.jsonl"), "--index", str(work / "index")], check=True
        )
    out_path = work / runs_name
    done = read_runs(out_path)
    held_out_only = runs_name != "runs.jsonl"
    todo = [
        q
        for q in read_questions(set_dir / "questions.jsonl")
        if q["id"] not in done and (not held_out_only or not reviewed_half(q["id"]))
    ]
    if not todo:
        return
    with Server(work, extra) as client, out_path.open("a", encoding="utf-8") as out:
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


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/evloop-feedback"))
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--phase", choices=("runs", "review", "score", "all"), default="all")
    args = parser.parse_args()
    names = [s for s in args.sets.split(",") if s]
    for name in names:
        if args.phase in ("runs", "all"):
            make_runs(EVAL_DIR / name, args.work / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
