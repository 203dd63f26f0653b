"""Lines appended to a store's shared files (the day manifests, the index) through descriptors kept
open: a finished run's two lines cost an ``fstat``, a ``write`` and an ``lseek`` each, not an open, a
seek, a read and a close.

Every line is one ``write`` to a descriptor opened in append mode, so lines from threads and other
processes stay whole, as before. Before each write the file held is asked whether a folder still
names it (its link count): a file replaced (``rewrite_index``), or removed with its day folder
(retention), is opened anew at its path (or the write fails as an open of a removed folder did),
not written through a descriptor of a file nobody reads.
With ``fresh_line`` a line follows a torn one (a process killed mid-write) on a line of its own: the
last byte is read only when the file does not end where this process's last line left it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

KEPT: Final = 8  # descriptors kept: the index and the manifests of the days being written


@dataclass(slots=True)
class _Open:
    fd: int
    end: int  # where this process's last line ended (-1: unknown)


class Appends:
    """The shared files this store appends lines to, each kept open."""

    def __init__(self) -> None:
        self._open: dict[Path, _Open] = {}
        self._lock = threading.Lock()

    def append(self, path: Path, line: bytes, *, fresh_line: bool = False) -> tuple[int, int]:
        """Append ``line`` (ending in a newline) to ``path``, created if missing, and return where it
        went (start, end); ``OSError`` when the file cannot be opened or written."""
        with self._lock:
            held, size = self._held(path)
            if fresh_line and 0 < size != held.end and _last_byte(held.fd, size) != b"\n":
                line = b"\n" + line
            os.write(held.fd, line)  # whole: a regular file's write is not cut short but by a full disk
            held.end = os.lseek(held.fd, 0, os.SEEK_CUR)  # in append mode: the end of this very line
            return held.end - len(line), held.end

    def close(self) -> None:
        with self._lock:
            for held in self._open.values():
                os.close(held.fd)
            self._open.clear()

    def _held(self, path: Path) -> tuple[_Open, int]:
        """The open descriptor of ``path`` and the file's size, opened anew when the file held is no
        longer in any folder (replaced by a rename, or removed)."""
        held = self._open.get(path)
        if held is not None:
            now = os.fstat(held.fd)
            if now.st_nlink > 0:
                return held, now.st_size
            del self._open[path]
            os.close(held.fd)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        held = _Open(fd, -1)
        self._open[path] = held
        while len(self._open) > KEPT:
            os.close(self._open.pop(next(iter(self._open))).fd)
        return held, os.fstat(fd).st_size


def _last_byte(fd: int, size: int) -> bytes:
    os.lseek(fd, size - 1, os.SEEK_SET)  # a write in append mode goes to the end all the same
    return os.read(fd, 1)
