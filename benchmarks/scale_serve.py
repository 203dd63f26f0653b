"""`evloop serve` over a large index: seconds to ready, and what each worker holds in memory.

    measure(index, workers, questions)   {"serveN_ready_s", "serveN_all_s", "serveN_rss_mb", "serveN_pss_mb"}

The server runs with ``--no-trace`` and ``EVLOOP_EMBEDDER=none`` (the benchmark's hash
embedder is no setting; the index's vectors are loaded whatever the embedder). Ready is /readyz
answering 200; all up is every worker having logged its start (one worker: the same), and the CPU
seconds the server and its workers had spent by then (imports, opening the index). Then every
question is asked twice per worker, so that each worker has answered some, and the RSS and PSS of
each worker process (the server itself for one worker) are read from /proc/PID/smaps_rollup.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

import httpx

DEADLINE_S = 600
STARTED = "Application startup complete"
ROWS: tuple[tuple[str, str, str], ...] = tuple(
    row
    for n in ("1", "N")
    for row in (
        (f"serve {n}: /readyz s", f"serve{n}_ready_s", "{:.2f}"),
        (f"serve {n}: all workers up s", f"serve{n}_all_s", "{:.2f}"),
        (f"serve {n}: CPU s until all up", f"serve{n}_cpu_s", "{:.2f}"),
        (f"serve {n}: RSS per worker MB", f"serve{n}_rss_mb", "{:,.0f}"),
        (f"serve {n}: PSS per worker MB", f"serve{n}_pss_mb", "{:,.0f}"),
    )
)


def measure(index: Path, workers: int, questions: Sequence[str]) -> dict[str, float]:
    """Start the server, time it to ready, ask, read each worker's memory, stop it."""
    name = "1" if workers == 1 else "N"
    port = _free_port()
    env = {**os.environ, "EVLOOP_EMBEDDER": "none"}
    command = [sys.executable, "-m", "evidence_loop.agent.doors.cli.app", "serve", "--index", str(index)]
    command += ["--port", str(port), "--workers", str(workers), "--no-trace"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
        try:
            started = time.perf_counter()
            ready = _wait(lambda: _ready(port), started)
            up = _wait(lambda: _count(log, STARTED) >= workers, started)
            cpu = _tree_cpu(process.pid)
            for _ in range(2 * workers):
                for question in questions:
                    httpx.post(f"http://127.0.0.1:{port}/v1/ask", json={"question": question}, timeout=120)
            pids = _workers(process.pid) if workers > 1 else [process.pid]
            memory = [_memory(pid) for pid in pids]
        finally:
            process.terminate()
            process.wait()
    return {
        f"serve{name}_ready_s": ready,
        f"serve{name}_all_s": up,
        f"serve{name}_cpu_s": cpu,
        f"serve{name}_rss_mb": sum(m[0] for m in memory) / len(memory),
        f"serve{name}_pss_mb": sum(m[1] for m in memory) / len(memory),
    }


def _wait(check: Callable[[], bool], started: float) -> float:
    while time.perf_counter() - started < DEADLINE_S:
        if check():
            return time.perf_counter() - started
        time.sleep(0.05)
    return float("nan")


def _ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def _count(log: IO[bytes], text: str) -> int:
    log.seek(0)
    return log.read().decode("utf-8", "replace").count(text)


def _workers(pid: int) -> list[int]:
    """The worker processes uvicorn spawned (its children running multiprocessing's spawn_main)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children if "spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes().decode()]


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user and system) of a process and every process below it."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return own + sum(_tree_cpu(int(child)) for child in children)


def _memory(pid: int) -> tuple[float, float]:
    """(RSS, PSS) in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value, *_ = line.split()
        fields[key.rstrip(":")] = int(value) * 1024 / 1e6
    return fields["Rss"], fields["Pss"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
