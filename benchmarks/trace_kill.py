"""kill -9 the server under load: every request that got an answer must have a durable trace that verifies.

    .venv/bin/python benchmarks/trace_kill.py [SET_DIR] [--seconds 8] [--clients 16] [--workers 2]
                                              [--kills 3] [--json OUT.json]

SET_DIR (default ../shared/eval/tara_zh beside the clone, or in EVLOOP_EVAL_DIR) holds corpus.jsonl
and questions.jsonl. For each of ``--kills`` rounds the script ingests the corpus into a temporary
index (lexical: EVLOOP_EMBEDDER=none), starts ``evloop serve --workers N`` (traced, the default trace
store beside the index), runs ``--clients`` clients asking the set's questions for ``--seconds``,
then sends SIGKILL to the server and all its workers at once. Every client writes one line per
request to the load log (``load.jsonl``: the HTTP status, the run id and the trace hash of an
answer, or the transport error of a request the kill cut). Then, from a fresh process's view of the
trace folder (``TraceStore.verify_all``), it counts:

- answered: requests that got an HTTP 200 with a trace (id, hash);
- durable and verifying: of those, runs whose trace verifies complete and ends on the answer's hash;
- missing or failing: answered runs without such a trace (must be 0);
- cut: requests the kill cut (no answer), and traces the store holds beyond the answered runs (runs
  durable when the kill came whose answers never reached their client);
- interrupted / not written / failed: verdicts of the other traces (a frame torn by the kill reads
  as interrupted; a failure here would be damage, and exits 1).

The load average (1 min) is printed before and after. Exits 1 if any answered run lacks its trace
or any trace fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from load_api import DEFAULT_SET, _with_descendants, questions, split_corpus, start_server

from evidence_loop.agent.access.keys import ApiKey, hash_key, keys_file_json, new_key
from evidence_loop.agent.service import Service
from evidence_loop.traces import TraceStore


def client_loop(url: str, key: str, asked: Sequence[str], start: int, stride: int, log: Any) -> None:
    """Ask until the server is gone; one log line per request."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        i = start
        while True:
            entry: dict[str, object] = {"client": start, "n": i}
            try:
                response = client.post("/v1/ask", json={"question": asked[i % len(asked)]})
                body = response.json()
                trace = body.get("trace") or {}
                entry.update(status=response.status_code, run_id=body.get("run_id"), hash=trace.get("hash"))
            except (httpx.TransportError, ValueError) as exc:
                entry.update(status=None, error=type(exc).__name__)
            log(entry)
            if entry["status"] is None:
                return
            i += stride


def one_round(work: Path, set_dir: Path, args: argparse.Namespace) -> dict[str, object]:
    base, _ = split_corpus(set_dir, 1)
    asked = questions(set_dir)
    service = Service.open(work / "index", create=True)
    service.ingest(base)
    service.close()
    key = new_key()
    keys = work / "keys.json"
    keys.write_text(keys_file_json([ApiKey("load", hash_key(key), frozenset(), frozenset({"ask"}))]))
    process, url = start_server(["--index", str(work / "index")], keys, args.workers, work / "serve.log")
    lines: list[dict[str, object]] = []
    lock = threading.Lock()
    load_log = (work / "load.jsonl").open("a", encoding="utf-8")

    def log(entry: dict[str, object]) -> None:
        with lock:
            lines.append(entry)
            load_log.write(json.dumps(entry) + "\n")

    threads = [
        threading.Thread(target=client_loop, args=(url, key, asked, c, args.clients, log))
        for c in range(args.clients)
    ]
    for thread in threads:
        thread.start()
    time.sleep(args.seconds)
    pids = _with_descendants([process.pid])
    for pid in pids:  # the server and every worker at once: nothing gets to finish cleanly
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait(timeout=30)
    for thread in threads:
        thread.join(60)
    load_log.close()
    return count(work / "index" / "traces", lines, len(pids))


def count(traces: Path, lines: list[dict[str, object]], killed: int) -> dict[str, object]:
    """The answered requests of the load log against the verdicts of the trace store."""
    verdicts = dict(TraceStore(traces).verify_all())
    answered = {str(e["run_id"]): str(e["hash"]) for e in lines if e["status"] == 200 and e.get("hash")}
    durable = {
        run
        for run, final in answered.items()
        if run in verdicts
        and verdicts[run].ok
        and verdicts[run].complete
        and verdicts[run].final_hash == final
    }
    others = {run: v for run, v in verdicts.items() if run not in answered}
    kinds: Counter[str] = Counter()
    for verdict in others.values():
        kinds["failed" if not verdict.ok else "not written" if not verdict.written else
              "complete" if verdict.complete else "incomplete"] += 1  # fmt: skip
    kinds.update(interrupted=sum(v.reason.startswith("interrupted") for v in others.values()))
    return {
        "processes killed": killed,
        "requests logged": len(lines),
        "answered (200 with a trace)": len(answered),
        "other statuses": dict(Counter(str(e["status"]) for e in lines if e["status"] not in (200, None))),
        "cut by the kill": sum(e["status"] is None for e in lines),
        "answered: durable, verifying, same hash": len(durable),
        "answered: missing or failing": len(answered) - len(durable),
        "traces beyond the answered": dict(sorted(kinds.items())),
        "journals": len(list(traces.rglob("*.journal"))),
        "run files": len([p for p in traces.rglob("*.jsonl") if p.name != "index.jsonl"]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set_dir", nargs="?", type=Path, default=DEFAULT_SET)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if not (args.set_dir / "corpus.jsonl").is_file():
        print(f"no corpus.jsonl in {args.set_dir}; nothing to measure", file=sys.stderr)
        return 0
    os.environ["EVLOOP_EMBEDDER"] = "none"
    rows = []
    for n in range(args.kills):
        before = os.getloadavg()[0]
        work = Path(tempfile.mkdtemp(prefix="evloop-kill-"))
        try:
            row = one_round(work, args.set_dir, args)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        row["load average (1 min) before, after"] = f"{before:.2f}, {os.getloadavg()[0]:.2f}"
        rows.append(row)
        print(f"round {n + 1}:", json.dumps(row, ensure_ascii=False), file=sys.stderr)
    width = max(len(k) for k in rows[0])
    for key in rows[0]:
        print(f"{key:<{width}}  " + "  ".join(f"{r[key]!s:<28}" for r in rows))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    bad = any(
        r["answered: missing or failing"] or "failed" in str(r["traces beyond the answered"]) for r in rows
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
