"""The journal's group commit off the request path: a thread that syncs what was written, every few ms.

With a journal opened ``within`` a number of seconds (``TraceStore(..., sync_within=...)``), a run
returns once its frame is written to the journal (the kernel holds it: a killed process loses nothing
it answered) and this thread makes it durable against a power cut: woken by the first frame written
after its last sync, it waits until ``within`` has passed since that sync began, then syncs every frame
written so far in one ``fdatasync`` (as PostgreSQL's WAL writer does with ``synchronous_commit =
off``). A frame is thus durable at most ``within`` plus one sync after its run returned.

A sync that fails is reported by the journal (``Journal.sync_written``: logged with the runs it
would have covered, the journal broken, so the next run writes a new one); this thread then stops.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Flusher:
    """Calls ``sync`` at most every ``within`` seconds while there is something to sync."""

    def __init__(self, sync: Callable[[], bool], within: float, name: str) -> None:
        self._sync = sync  # syncs what was written; False once the journal is broken
        self._within = within
        self._changed = threading.Condition()
        self._due = False  # a frame was written since the last sync began
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """A frame was written: sync it within ``within`` seconds."""
        with self._changed:
            self._due = True
            self._changed.notify()

    def stop(self) -> None:
        """Sync what is due now, then end the thread (returns once it ended)."""
        with self._changed:
            self._stop = True
            self._changed.notify()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        began = time.monotonic() - self._within
        while True:
            with self._changed:
                while not (self._due or self._stop):
                    self._changed.wait()
                stopping = self._stop
            if not stopping:  # group the frames written meanwhile into this sync
                time.sleep(max(0.0, began + self._within - time.monotonic()))
            with self._changed:
                self._due = False
                stopping = self._stop
            began = time.monotonic()
            if not self._sync() or stopping:
                return
