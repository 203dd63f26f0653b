"""A disk that fills up, for the full-disk tests: a real small filesystem where one can be mounted,
else the project's own fault-injection seam at its write calls (``tools.disk.check_write``).

Mounting a tmpfs needs root (CI runs as root, so there the tests meet a real full disk: SQLite's
own files, numpy's index files, the trace lines all fail as they would). Elsewhere ``SmallDisk``
falls back to ``EVLOOP_INJECT_FAULT``: a control file that makes this project's writes under the
folder fail with ENOSPC, switched on and off by writing and removing it, in this process and in
any server started with the same environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from evidence_loop.tools.disk import FAULT_ENV

FILL_CHUNK = 64 * 1024


class SmallDisk:
    """A folder on a disk of ``size_kb`` (mounted) or on the usual disk with injected faults."""

    def __init__(self, folder: Path, control: Path, *, mounted: bool) -> None:
        self.folder = folder
        self.control = control
        self.mounted = mounted
        self._filler = folder / "filler.bin"

    def fill(self, leave_bytes: int = 0) -> None:
        """Leave at most ``leave_bytes`` free (mounted), or make every write under the folder fail."""
        if not self.mounted:
            self.control.write_text(f"ENOSPC {self.folder}", encoding="utf-8")
            return
        with self._filler.open("ab") as out:
            while (free := shutil.disk_usage(self.folder).free) > leave_bytes:
                try:
                    out.write(bytes(min(FILL_CHUNK, max(free - leave_bytes, 1))))
                    out.flush()
                except OSError:
                    break

    def free(self) -> None:
        """Room again: the filler removed, or the fault switched off."""
        self.control.unlink(missing_ok=True)
        self._filler.unlink(missing_ok=True)

    @property
    def env(self) -> dict[str, str]:
        """What a server started on this disk needs in its environment (the fault's control file)."""
        return {FAULT_ENV: str(self.control)}


def _mount(folder: Path, size_kb: int) -> bool:
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@contextmanager
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size_kb: int = 4096) -> Iterator[SmallDisk]:
    """A ``SmallDisk`` under ``tmp_path``, unmounted (or its fault switched off) when the test ends."""
    folder = tmp_path / "small-disk"
    folder.mkdir()
    control = tmp_path / "inject-fault"
    monkeypatch.setenv(FAULT_ENV, str(control))
    mounted = _mount(folder, size_kb)
    try:
        yield SmallDisk(folder, control, mounted=mounted)
    finally:
        control.unlink(missing_ok=True)
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], check=False)
