"""Group commit for trace files: one fsync of a folder shared by every run that needs it at once.

A finished run's file is durable once its data is synced (``fdatasync`` of the file, in the run's
own thread: the kernel's journal commits concurrent ones together) and its folder entry is (an
``fsync`` of the folder). Any folder sync that *starts* after the file was created covers it, so
runs finishing together need one between them, not one each:

    mark = sync.mark()        when the file is created: the syncs started so far
    ...
    sync.wait_covered(mark)   at finish: returns once a sync started after the mark has completed;
                              the first run to arrive with none in flight makes it (the leader),
                              those arriving meanwhile wait for it or for the next one

A run returns only after a sync that covers its own file, never on an earlier one. A failed sync
raises in the leader's run; its followers try again (one of them leads the next).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

Fsync = Callable[[int], None]


class GroupSync:
    """The shared fsync of one folder."""

    def __init__(self, folder: Path, fsync: Fsync = os.fsync) -> None:
        self.folder = folder
        self._fsync = fsync
        self._changed = threading.Condition()
        self._started = 0  # syncs begun, numbered from 1
        self._done = 0  # the number of the last sync that completed
        self._running = False
        self.syncs = 0  # syncs made (for the tests and benchmarks)

    def mark(self) -> int:
        """Call once the file exists: a sync numbered above this mark covers it."""
        with self._changed:
            return self._started

    def wait_covered(self, mark: int) -> None:
        """Return once a sync started after ``mark`` has completed, leading one if none is in flight."""
        with self._changed:
            while self._done <= mark:
                if not self._running:
                    self._running = True
                    self._started += 1
                    number = self._started
                    break
                self._changed.wait()
            else:
                return
        try:
            self._sync_folder()
            with self._changed:
                self._done = number
        finally:
            with self._changed:
                self._running = False
                self._changed.notify_all()

    def _sync_folder(self) -> None:
        if os.name == "nt":  # folders cannot be opened for fsync on Windows
            return
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            self._fsync(fd)
            self.syncs += 1
        finally:
            os.close(fd)
