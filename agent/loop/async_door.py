"""The service's async door (``Service.aask``): the same loop as ``Service.ask``, awaited from asyncio.

The loop is CPU-bound Python, so awaiting it on the event loop would stall every other request of a
chatbot's web server. Each question runs ``Service.ask`` itself in a worker thread of the door's own
executor, with the caller's context copied in (log fields, the caller's OpenTelemetry span), and at
most ``running`` questions run the loop at once; the rest wait on the event loop, first come first
served, holding no thread. Why a bound: the GIL lets one thread run Python at a time, so more
threads in the loop would not answer sooner, they would all answer later and leave the event loop
thread a smaller share of the interpreter (the default, up to 4 and no more than the cores, keeps
the parts that release the GIL, numpy and the trace's fsync, overlapping).

The optional LLM conflict check is network I/O, not CPU: its pydantic-ai run is awaited on the
caller's event loop (``runtime.awaited``, through ``asyncio.run_coroutine_threadsafe``), and while
it waits the question gives its running slot to the next one, taking it back when the model has
answered. The trace records the same steps either way, so a run replays as it does through ``ask``.

A caller that stops waiting (a cancelled task) does not stop the run: it finishes in its thread,
its trace written, and only then frees its slot.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import weakref
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from evidence_loop.agent.loop.runtime import LOOP_BRIDGE

T = TypeVar("T")
MAX_DEFAULT_RUNNING = 4
# threads: the running questions and those waiting for a model's reply (which hold no running slot)
MAX_THREADS = 64


def default_running() -> int:
    """Up to 4 questions in the loop at once, no more than the machine's cores."""
    return max(1, min(MAX_DEFAULT_RUNNING, os.cpu_count() or 1))


class AsyncDoor:
    """Runs blocking question work off the event loop, ``running`` at a time per event loop."""

    def __init__(self, running: int | None = None) -> None:
        self.running = running if running is not None else default_running()
        if self.running < 1:
            raise ValueError(f"running must be at least 1, not {self.running}")
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        # asyncio primitives belong to one event loop: a semaphore per loop that uses the door
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` in a worker thread once a running slot is free; its result or its exception."""
        loop = asyncio.get_running_loop()
        slots = self._slots_of(loop)
        await slots.acquire()
        try:
            context = contextvars.copy_context()
            bridge = _Bridge(loop, slots)
            done = loop.run_in_executor(self._pool(), context.run, _bridged, bridge, work)
        except BaseException:
            slots.release()
            raise
        done.add_done_callback(lambda _: slots.release())  # when the thread is done, not the caller
        return await asyncio.shield(done)

    def _slots_of(self, loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Semaphore(self.running)
        return slots

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="evloop-aask")
            return self._executor

    def close(self) -> None:
        """Wait for the questions in flight, then stop the threads."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)


def _bridged(bridge: _Bridge, work: Callable[[], T]) -> T:
    token = LOOP_BRIDGE.set(bridge)
    try:
        return work()
    finally:
        LOOP_BRIDGE.reset(token)


class _Bridge:
    """A worker thread's way back to its caller's event loop, for a model call's coroutine."""

    def __init__(self, loop: asyncio.AbstractEventLoop, slots: asyncio.Semaphore) -> None:
        self._loop = loop
        self._slots = slots

    def __call__(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(self._waiting(make), self._loop).result()

    async def _waiting(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        self._slots.release()  # waiting on the network: another question may run meanwhile
        try:
            return await make()
        finally:
            await self._slots.acquire()
