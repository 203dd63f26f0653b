"""What the audit console costs: a run page of 50 steps, the first page of a list of 100,000 runs with
its columns (answer preview, reason, review) and filters, and the figures of that day.

    .venv/bin/python benchmarks/bench_audit.py [--runs 100000] [--repeat 20] [--reviews 1000]

The script, in one process, on a temporary index of the bundled sample help centre:

1. asks one question, then writes a second trace of the same run with 50 steps (the recorded steps,
   the slides repeated until there are 50, a real hash chain through the trace writer);
2. times ``GET /audit/runs/{run_id}`` of that run through the app (test client: routing, reading,
   verifying, resolving cited text, rendering), median and worst of ``--repeat``;
3. fills one UTC day of the trace store with ``--runs`` runs (copies of three finished traces under new
   run ids: an answer, a refusal naming an uncovered model and a follow-up, 8:1:1, each with its
   manifest line, as a day of traffic leaves them; their chains are not re-hashed, which listing does
   not read) and ``--reviews`` reviews spread evenly over them, then times each page twice: the first
   request of a fresh app (nothing cached: the day's manifest and every row the page passes over are
   read), and the same page again: ``GET /audit``, filtered by status, by question text, by review
   (reviewed, and a verdict), by missing kind, and ``GET /audit/figures`` of that day (every row).

Targets (issues 21 and 35): the run page under 300 ms, the list's first page under 500 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api import create_app
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.traces import TraceStore
from evidence_loop.traces.feedback.feedback import FeedbackEntry
from evidence_loop.traces.feedback.feedback_folder import FolderFeedback
from evidence_loop.traces.journal.manifest import MANIFEST_NAME
from evidence_loop.traces.records.steps import DecidedStep, SlidStep

QUESTION = "LM-S10 整机保修多久？"
REFUSED = "LM-Z900 的整机保修期是多久？"
FOLLOW_UP = "它的电池保修多久？"
STEPS = 50
DAY = "2026-11-30"


def timed(call: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def fifty_step_run(service: Service) -> str:
    """A stored run of the sample help centre with 50 steps, chained by the trace writer."""
    assert service.traces is not None
    outcome = service.ask(QUESTION)
    trace = service.trace(outcome.run_id)
    steps = [e.data for e in trace.events]
    slides = [s for s in steps if isinstance(s, SlidStep)] or steps[:1]
    body = [s for s in steps if not isinstance(s, DecidedStep)]
    while len(body) < STEPS - 1:
        body.insert(1, slides[len(body) % len(slides)])
    decided = [s for s in steps if isinstance(s, DecidedStep)]
    header = trace.header.model_copy(update={"run_id": "bench-50-steps", "hash": ""})
    writer = service.traces.begin(header)
    for step in [*body, *decided]:
        writer.append(step)
    assert trace.footer is not None
    writer.finish(trace.footer.outcome_status, versions_read=trace.footer.versions_read)
    writer.close()
    return "bench-50-steps"


def templates(service: Service, tmp: Path, run_id: str) -> list[Path]:
    """The records of the runs a day is filled with, each as a file of its own: the 50-step answer,
    a refusal, a follow-up."""
    assert service.traces is not None
    refused = service.ask(REFUSED)
    first = service.ask(QUESTION)
    follow = service.ask(FOLLOW_UP, history=[{"question": QUESTION, "run_id": first.run_id}])
    assert refused.status == "insufficient_evidence" and follow.resolved_question is not None
    paths = []
    for run in (run_id, refused.run_id, follow.run_id):
        paths.append(tmp / f"{run}.jsonl")
        paths[-1].write_bytes(service.traces.raw(run))
    return paths


def fill_day(store: TraceStore, runs_like: list[Path], runs: int, reviews: int) -> Path:
    """``runs`` copies of the runs ``runs_like`` (the first eight in ten, the others one in ten each)
    in a fresh day folder, each named in the day's manifest, and ``reviews`` of them reviewed."""
    day = store.root / "2026" / "11" / "30"
    day.mkdir(parents=True)
    texts = [(path.read_text(encoding="utf-8"), path.stem) for path in runs_like]
    manifest = []
    for n in range(runs):
        text, old_id = texts[0] if n % 10 < 8 else texts[n % 10 - 7]
        created = json.loads(text.split("\n", 1)[0])["created_at"]
        run_id = f"r{n:07d}"
        moment = f"{DAY}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}000Z"
        copy = text.replace(old_id, run_id).replace(created, moment, 1)
        (day / f"{run_id}.jsonl").write_text(copy, encoding="utf-8")
        manifest.append(
            json.dumps({"run_id": run_id, "final_hash": "0" * 64, "events": 1}, separators=(",", ":"))
        )
    (day / MANIFEST_NAME).write_text("\n".join(manifest) + "\n", encoding="utf-8")
    log = FolderFeedback(store.root / "feedback", fsync=False)
    for n in range(0, runs, max(1, runs // reviews) if reviews else runs + 1):
        verdict = "correct" if n % 3 else "should_have_refused"
        log.append(FeedbackEntry(f"r{n:07d}", "0" * 64, verdict, f"{DAY}T23:59:59Z", "bench"))
    return day


PAGES = (
    ("runs list, first page", "/audit"),
    ("status=answered", "/audit?status=answered"),
    ("question contains LM-S10", "/audit?q=LM-S10"),
    ("review=reviewed", "/audit?review=reviewed"),
    ("review=should_have_refused", "/audit?review=should_have_refused"),
    ("missing=uncovered_slot", "/audit?missing=uncovered_slot"),
    ("figures of the day (every row)", f"/audit/figures?from={DAY}&to={DAY}"),
)


def time_pages(service: Service, repeat: int, runs: int) -> list[tuple[str, list[float], float]]:
    """Each page of PAGES on a fresh app (nothing cached), then again."""
    rows: list[tuple[str, list[float], float]] = []
    for name, url in PAGES:
        fresh = TestClient(create_app(service, None))
        cold = timed(partial(fresh.get, url), 1)
        page = fresh.get(url)
        if page.status_code == 404:  # a tree without that page (benchmarking an older one)
            continue
        assert page.status_code == 200, (url, page.status_code)
        rows.append((f"{name}, fresh app", cold, 500))
        rows.append((f"{name}, again", timed(partial(fresh.get, url), repeat), 500))
    first = TestClient(create_app(service, None)).get("/audit")
    assert first.text.count("data-run-id=") == 50, "the first page holds 50 runs"
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--reviews", type=int, default=1000)
    args = parser.parse_args()
    rows: list[tuple[str, list[float], float]] = []
    with tempfile.TemporaryDirectory(prefix="evloop-bench-audit-") as tmp:
        service = Service.open(Path(tmp) / "index", create=True, embedder=None)
        service.ingest(load_sample_kb())
        run_id = fifty_step_run(service)
        assert len(service.trace(run_id).events) == STEPS
        client = TestClient(create_app(service, None))
        page = client.get(f"/audit/runs/{run_id}")
        assert page.status_code == 200 and page.text.count('class="step ') == STEPS
        rows.append(
            (f"run page, {STEPS} steps", timed(lambda: client.get(f"/audit/runs/{run_id}"), args.repeat), 300)
        )

        assert service.traces is not None
        start = time.perf_counter()
        fill_day(service.traces, templates(service, Path(tmp), run_id), args.runs, args.reviews)
        print(f"wrote {args.runs} runs into one day in {time.perf_counter() - start:.1f} s", flush=True)
        os.sync()
        rows += time_pages(service, args.repeat, args.runs)
        service.close()
    print(f"{'what':<52}{'median ms':>10}{'worst ms':>10}{'target':>8}")
    for name, times, target in rows:
        print(f"{name:<52}{statistics.median(times):>10.1f}{max(times):>10.1f}{'<' + str(target):>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
