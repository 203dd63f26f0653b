"""What the audit console costs: a run page of 50 steps, and the first page of a list of 100,000 runs.

    .venv/bin/python benchmarks/bench_audit.py [--runs 100000] [--repeat 20]

The script, in one process, on a temporary index of the bundled sample help centre:

1. asks one question, then writes a second trace of the same run with 50 steps (the recorded steps,
   the slides repeated until there are 50, a real hash chain through the trace writer);
2. times ``GET /audit/runs/{run_id}`` of that run through the app (test client: routing, reading,
   verifying, resolving cited text, rendering), median and worst of ``--repeat``;
3. fills one UTC day of the trace store with ``--runs`` runs (copies of one finished trace under new run
   ids, each with its manifest line, as a day of traffic leaves them; their chains are not re-hashed,
   which listing does not read) and times ``GET /audit``: the first request of a fresh app (nothing
   cached) and the same page again, then a page filtered by status and one by question text.

Targets (issue 21): the run page under 300 ms, the list's first page under 500 ms.
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

from evidence_loop.agent.api import create_app
from evidence_loop.agent.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.traces import TraceStore
from evidence_loop.traces.manifest import MANIFEST_NAME
from evidence_loop.traces.steps import DecidedStep, SlidStep

QUESTION = "LM-S10 整机保修多久？"
STEPS = 50


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


def fill_day(store: TraceStore, template: Path, runs: int) -> Path:
    """``runs`` copies of one finished trace in a fresh day folder, each named in the day's manifest."""
    day = store.root / "2026" / "11" / "30"
    day.mkdir(parents=True)
    text = template.read_text(encoding="utf-8")
    old_id = template.stem
    created = json.loads(text.splitlines()[0])["created_at"]
    manifest = []
    for n in range(runs):
        run_id = f"r{n:07d}"
        moment = f"2026-11-30T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}000Z"
        copy = text.replace(old_id, run_id).replace(created, moment, 1)
        (day / f"{run_id}.jsonl").write_text(copy, encoding="utf-8")
        manifest.append(
            json.dumps({"run_id": run_id, "final_hash": "0" * 64, "events": 1}, separators=(",", ":"))
        )
    (day / MANIFEST_NAME).write_text("\n".join(manifest) + "\n", encoding="utf-8")
    return day


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
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
        template = Path(tmp) / f"{run_id}.jsonl"  # the run's records as a file of its own
        template.write_bytes(service.traces.raw(run_id))
        fill_day(service.traces, template, args.runs)
        print(f"wrote {args.runs} runs into one day in {time.perf_counter() - start:.1f} s", flush=True)
        os.sync()
        cold = []
        for _ in range(max(3, args.repeat // 4)):
            fresh = TestClient(create_app(service, None))
            cold += timed(partial(fresh.get, "/audit"), 1)
        first = fresh.get("/audit")
        assert first.status_code == 200 and first.text.count("data-run-id=") == 50
        rows.append((f"runs list, first page of {args.runs} (fresh app)", cold, 500))
        rows.append(
            (
                f"runs list, first page of {args.runs} (again)",
                timed(lambda: fresh.get("/audit"), args.repeat),
                500,
            )
        )
        rows.append(
            (
                "runs list, status=answered",
                timed(lambda: fresh.get("/audit?status=answered"), args.repeat),
                500,
            )
        )
        rows.append(
            (
                "runs list, question contains LM-S10",
                timed(lambda: fresh.get("/audit?q=LM-S10"), args.repeat),
                500,
            )
        )
        service.close()
    print(f"{'what':<48}{'median ms':>10}{'worst ms':>10}{'target':>8}")
    for name, times, target in rows:
        print(f"{name:<48}{statistics.median(times):>10.1f}{max(times):>10.1f}{'<' + str(target):>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
