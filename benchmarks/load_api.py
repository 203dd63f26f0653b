"""A bounded load test of the HTTP API on a loopback port: questions with and without a concurrent ingest.

    .venv/bin/python benchmarks/load_api.py [SET_DIR] [--seconds 60] [--clients 16] [--ingest-docs 200]
                                            [--workers 1] [--json OUT.json] [--no-trace]
                                            [--store URL [--replicas N]] [--phases quiet]
                                            [--ingest-embed-cache FILE]

SET_DIR (default ../shared/eval/tara_zh beside the clone, or in EVLOOP_EVAL_DIR) holds corpus.jsonl
and questions.jsonl. The script

1. holds ``--ingest-docs`` documents of the corpus back (every n-th by doc_id, so deterministic),
   ingests the rest into a temporary index, writes a one-key KEYS.json;
2. starts ``evloop serve`` on 127.0.0.1 and a free port, waits for /healthz;
3. phase "quiet": ``--clients`` threads, each with its own keep-alive connection, ask the set's
   questions in turn for ``--seconds``;
4. phase "ingest": the same load for ``--seconds`` while one POST /v1/documents sends the held-back
   documents as one batch (after one second), and a probe lists the documents every 50 ms: each
   listing must show all of the batch or none of it; at the end all of it must be there;
5. stops the server, removes the temporary folder, prints a table (``--json`` also writes it).

With ``--store URL`` (an empty, migrated PostgreSQL database) the corpus goes there and
``--replicas`` servers share it, the clients spread over them. Each phase also reports CPU
milliseconds per request: of the servers (their processes and workers), of this load generator, and of the
whole machine (the rest is PostgreSQL and whatever else runs).

It exits 1 if any response was a 5xx, a listing showed part of the batch, or a document was lost.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx
from common import percentile

from evidence_loop.agent import settings
from evidence_loop.agent.access.keys import ApiKey, hash_key, keys_file_json, new_key
from evidence_loop.agent.service import Service
from evidence_loop.agent.tuning.evaluate import read_questions
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.parse.sources import read_corpus_jsonl
from evidence_loop.tools.types import DocumentInput

# ../shared/eval beside the clone; EVLOOP_EVAL_DIR overrides
EVAL_DIR = Path(os.environ.get("EVLOOP_EVAL_DIR") or Path(__file__).resolve().parents[2] / "shared" / "eval")
DEFAULT_SET = EVAL_DIR / "tara_zh"
HOST = "127.0.0.1"
INGEST_DELAY = 1.0
PROBE_EVERY = 0.05
TRANSPORT_ERROR = 599  # recorded in place of a status when the connection failed


@dataclass(slots=True)
class Phase:
    """What one phase measured."""

    name: str
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    spans: list[tuple[float, float]] = field(default_factory=list)  # (start, end) of each question
    ingest_span: tuple[float, float] | None = None
    statuses: Counter[int] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    ingest_seconds: float | None = None
    ingest_status: int | None = None
    probes: Counter[int] = field(default_factory=Counter)
    lost: int | None = None
    cpu: tuple[float, float, float] = (0.0, 0.0, 0.0)  # seconds: servers, this client, the machine
    lock: threading.Lock = field(default_factory=threading.Lock)  # the clients share the counters

    def overlapping_ingest(self) -> list[float]:
        """Latencies of the questions in flight at some moment of the ingest request."""
        if self.ingest_span is None:
            return []
        first, last = self.ingest_span
        return [
            ms
            for ms, (start, end) in zip(self.latencies_ms, self.spans, strict=True)
            if start < last and end > first
        ]

    def summary(self) -> dict[str, object]:
        done = len(self.latencies_ms)
        during = self.overlapping_ingest()
        return {
            "phase": self.name,
            "requests": done,
            "throughput_rps": round(done / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": _ms(self.latencies_ms, 0.50),
            "p95_ms": _ms(self.latencies_ms, 0.95),
            "p99_ms": _ms(self.latencies_ms, 0.99),
            "5xx": sum(n for s, n in self.statuses.items() if s >= 500),  # 599: connection failed
            "statuses": dict(sorted(self.statuses.items())),
            "outcomes": dict(sorted(self.outcomes.items())),
            "ingest_seconds": self.ingest_seconds,
            "during_ingest": {
                "requests": len(during),
                "p50_ms": _ms(during, 0.50),
                "p95_ms": _ms(during, 0.95),
                "max_ms": round(max(during, default=0.0), 1),
            },
            "ingest_status": self.ingest_status,
            "listings_by_batch_docs_visible": dict(sorted(self.probes.items())),
            "lost_documents": self.lost,
            "cpu_ms_per_request": {
                part: round(seconds * 1000 / done, 2) if done else None
                for part, seconds in zip(("server", "client", "machine"), self.cpu, strict=True)
            },
        }


def _ms(samples: Sequence[float], q: float) -> float:
    """A percentile for the JSON summary: 0 rather than NaN when there are no samples."""
    return round(percentile(samples, q), 1) if samples else 0.0


def split_corpus(set_dir: Path, held: int) -> tuple[list[DocumentInput], list[DocumentInput]]:
    """(base, held back): every n-th document by doc_id is held back, ``held`` of them."""
    docs = sorted(read_corpus_jsonl(set_dir / "corpus.jsonl"), key=lambda d: d.doc_id)
    step = max(1, len(docs) // held)
    back = set(range(0, step * held, step))
    return [d for i, d in enumerate(docs) if i not in back], [d for i, d in enumerate(docs) if i in back]


def questions(set_dir: Path) -> list[str]:
    return [str(record["question"]) for record in read_questions(set_dir / "questions.jsonl")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(
    store: list[str], keys: Path, workers: int, log: Path, extra: Sequence[str] = ()
) -> tuple[subprocess.Popen[bytes], str]:
    """``evloop serve`` on loopback; returns once /readyz answers (or raises after 300 s: a busy machine)."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "evidence_loop.agent.doors.cli.app",
        "serve",
        *store,
        "--keys",
        str(keys),
        *extra,
    ]
    command += ["--host", HOST, "--port", str(port), "--workers", str(workers), "--quiet"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://{HOST}:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"the server did not start:\n{log.read_text()}")


def _stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (None once the process is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _with_descendants(pids: Sequence[int]) -> set[int]:
    """The processes and every process below them: ``serve --workers N`` answers in its workers."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(entry.name)) is not None:
            parents[int(entry.name)] = int(fields[1])
    found, grown = set(pids), True
    while grown:
        below = {pid for pid, parent in parents.items() if parent in found} - found
        found |= below
        grown = bool(below)
    return found


def cpu_seconds(pids: Sequence[int]) -> float:
    """User + system CPU of the processes and their descendants, the workers (from /proc; a process
    that ended meanwhile no longer counts, so a phase reads them at its start and its end alike)."""
    total = 0
    for pid in _with_descendants(pids):
        fields = _stat(pid)
        if fields is not None:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def machine_seconds() -> float:
    """CPU seconds the whole machine was busy (all cores, from /proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def client_loop(
    url: str, key: str, asked: Sequence[str], start: int, stride: int, until: float, phase: Phase
) -> None:
    """One client: ask questions start, start+stride, ... until the deadline, one at a time."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        i = start
        while time.monotonic() < until:
            began = time.perf_counter()
            sent = time.monotonic()
            try:
                response = client.post("/v1/ask", json={"question": asked[i % len(asked)]})
                code, status = response.status_code, response.json().get("status")
            except httpx.TransportError:  # a dropped connection counts as a failure; the client reconnects
                code, status = TRANSPORT_ERROR, None
            elapsed = (time.perf_counter() - began) * 1000
            with phase.lock:
                phase.latencies_ms.append(elapsed)
                phase.spans.append((sent, time.monotonic()))
                phase.statuses[code] += 1
                if code == 200:
                    phase.outcomes[str(status)] += 1
            i += stride


def ingest_and_probe(url: str, key: str, batch: list[DocumentInput], until: float, phase: Phase) -> None:
    """After a pause, send the batch in one request; meanwhile list the documents every 50 ms."""
    ids = {d.doc_id for d in batch}
    body = {"documents": [_record(d) for d in batch]}
    headers = {"Authorization": f"Bearer {key}"}
    finished = threading.Event()

    def probe() -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            while time.monotonic() < until and not (finished.is_set() and phase.probes[len(ids)] > 3):
                listed = client.get("/v1/documents").json()["documents"]
                phase.probes[sum(d["doc_id"] in ids for d in listed)] += 1
                time.sleep(PROBE_EVERY)

    prober = threading.Thread(target=probe)
    prober.start()
    time.sleep(INGEST_DELAY)
    began = time.monotonic()
    response = httpx.post(f"{url}/v1/documents", json=body, headers=headers, timeout=600)
    phase.ingest_span = (began, time.monotonic())
    phase.ingest_seconds = round(phase.ingest_span[1] - began, 3)
    phase.ingest_status = response.status_code
    finished.set()
    prober.join()
    listed = httpx.get(f"{url}/v1/documents", headers=headers, timeout=60).json()["documents"]
    phase.lost = len(ids - {d["doc_id"] for d in listed})


def _record(doc: DocumentInput) -> dict[str, object]:
    return {
        "doc_id": doc.doc_id,
        "text": doc.text,
        "title": doc.title,
        "version": doc.version,
        "format": doc.format,
        "acl": list(doc.acl),
        "metadata": dict(doc.metadata),
    }


def run_phase(
    name: str,
    urls: Sequence[str],
    key: str,
    asked: Sequence[str],
    args: argparse.Namespace,
    batch: list[DocumentInput] | None,
    servers: Sequence[int] = (),
) -> Phase:
    """``args.clients`` clients for ``args.seconds`` (spread over ``urls``), plus the ingest when a
    batch is given; ``servers`` are the pids whose CPU is counted."""
    phase = Phase(name)
    until = time.monotonic() + args.seconds
    threads = [
        threading.Thread(
            target=client_loop, args=(urls[c % len(urls)], key, asked, c, args.clients, until, phase)
        )
        for c in range(args.clients)
    ]
    url = urls[0]
    if batch is not None:
        threads.append(threading.Thread(target=ingest_and_probe, args=(url, key, batch, until, phase)))
    began = time.monotonic()
    cpu = (cpu_seconds(servers), resource.getrusage(resource.RUSAGE_SELF), machine_seconds())
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    phase.seconds = time.monotonic() - began
    own = resource.getrusage(resource.RUSAGE_SELF)
    client = own.ru_utime + own.ru_stime - cpu[1].ru_utime - cpu[1].ru_stime
    phase.cpu = (cpu_seconds(servers) - cpu[0], client, machine_seconds() - cpu[2])
    return phase


def print_table(rows: list[dict[str, object]]) -> None:
    keys = [
        "requests",
        "throughput_rps",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "5xx",
        "outcomes",
        "ingest_seconds",
        "during_ingest",
        "listings_by_batch_docs_visible",
        "lost_documents",
        "cpu_ms_per_request",
    ]
    width = max(len(k) for k in keys)
    print(f"{'phase':<{width}}  " + "  ".join(f"{r['phase']!s:<36}" for r in rows))
    for key in keys:
        print(f"{key:<{width}}  " + "  ".join(f"{r[key]!s:<36}" for r in rows))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set_dir", nargs="?", type=Path, default=DEFAULT_SET)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--ingest-docs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--no-trace", action="store_true", help="servers write no traces")
    parser.add_argument("--store", default=None, help="an empty, migrated PostgreSQL database")
    parser.add_argument("--replicas", type=int, default=1, help="servers sharing --store")
    parser.add_argument("--phases", choices=("both", "quiet"), default="both")
    parser.add_argument(
        "--ingest-embed-cache",
        type=Path,
        default=None,
        help="a vector cache file for the corpus ingest only (repeated runs); the servers embed questions",
    )
    args = parser.parse_args(argv)
    if not (args.set_dir / "corpus.jsonl").is_file():
        print(f"no corpus.jsonl in {args.set_dir}; nothing to measure", file=sys.stderr)
        return 0
    base, batch = split_corpus(args.set_dir, args.ingest_docs)
    asked = questions(args.set_dir)
    work = Path(tempfile.mkdtemp(prefix="evloop-load-"))
    try:
        rows = measure(work, base, batch, asked, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print_table(rows)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return 0 if all(_healthy(r, len(batch)) for r in rows) else 1


def measure(
    work: Path,
    base: list[DocumentInput],
    batch: list[DocumentInput],
    asked: list[str],
    args: argparse.Namespace,
) -> list[dict[str, object]]:
    """Set up the index, key and server in ``work``; run both phases; always stop the server."""
    location: Path | str = args.store or work / "index"
    embedder: EmbedConfig | Literal["configured"] = "configured"
    if args.ingest_embed_cache:  # vectors of earlier runs for the ingest only; the servers compute theirs
        embedder = dataclasses.replace(
            EmbedConfig.from_env(settings.current().environ()), cache=str(args.ingest_embed_cache)
        )
    service = Service.open(location, create=True, embedder=embedder)
    service.ingest(base)
    service.close()
    key = new_key()
    (work / "keys.json").write_text(
        keys_file_json([ApiKey("load", hash_key(key), frozenset(), frozenset({"ask", "ingest", "publish"}))])
    )
    print(
        f"{len(base)} documents indexed, {len(batch)} held back, {len(asked)} questions; "
        f"{args.clients} clients, {args.seconds:g} s per phase, {args.workers} worker(s)",
        file=sys.stderr,
    )
    store = ["--store", args.store] if args.store else ["--index", str(work / "index")]
    extra = ["--no-trace"] if args.no_trace else []
    started = [
        start_server(store, work / "keys.json", args.workers, work / f"serve-{n}.log", extra)
        for n in range(args.replicas if args.store else 1)
    ]
    urls, pids = [url for _, url in started], [p.pid for p, _ in started]
    try:
        phases = [run_phase("quiet", urls, key, asked, args, None, pids)]
        if args.phases == "both":
            phases.append(run_phase(f"with ingest of {len(batch)}", urls, key, asked, args, batch, pids))
    finally:
        for process, _ in started:
            process.terminate()
            process.wait(timeout=180)  # a busy machine: 30 s was not enough at a load of 21
    rows = [phase.summary() for phase in phases]
    if not all(_healthy(r, len(batch)) for r in rows):
        print(
            "server log (last 40 lines):",
            *(work / "serve-0.log").read_text().splitlines()[-40:],
            sep="\n",
            file=sys.stderr,
        )
    return rows


def _healthy(row: dict[str, object], batch: int) -> bool:
    visible = row["listings_by_batch_docs_visible"]
    assert isinstance(visible, dict)
    partial = any(count not in (0, batch) for count in visible)
    return row["5xx"] == 0 and not partial and row["lost_documents"] in (None, 0)


if __name__ == "__main__":
    sys.exit(main())
