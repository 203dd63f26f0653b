"""A full or failing disk, told apart from damage: the errors that mean "no space" or "I/O error".

    disk_error(exc, folder, doing)    the DiskError an OSError or sqlite3 error stands for, or None
    is_full(folder)                   less free space under ``folder`` than any write needs
    check_write(path)                 the fault-injection seam: raise the configured error for ``path``

Python's own writes say ENOSPC or EIO in ``errno``; some libraries do not (numpy's ``tofile``
reports "632064 requested and 466880 written" with no errno), and SQLite folds every failed write
into SQLITE_IOERR ("disk I/O error"), SQLITE_FULL only for its own files growing. So an error
without a clear errno counts as "disk full" when the disk under the folder has (almost) no free
space left at that moment, as "an I/O error" when it is one of SQLite's I/O errors, and as
neither otherwise.

The fault-injection seam: with ``EVLOOP_INJECT_FAULT=FILE``, while FILE holds ``ENOSPC /some/path``
(or ``EIO /some/path``) every write this project makes itself under that path (trace lines, index
files) fails with that error, the way a full or failing disk would; removing FILE ends the fault,
in a running server too. The tests use it where no small filesystem can be mounted (that needs
root). Unset (always, outside tests), the seam costs one environment lookup per write.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

from evidence_loop.tools.errors import DiskError

FAULT_ENV = "EVLOOP_INJECT_FAULT"
# Below this many free bytes a failed write is taken for a full disk (a trace, a page, an index file
# each need more; a disk with this much left fails writes only because it is nearly full).
FULL_BELOW_BYTES = 1 << 20
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_IO_ERRNOS = frozenset({errno.EIO})
_SQLITE_FULL, _SQLITE_IOERR = 13, 10  # primary result codes (the low byte of an extended one)
_FAULTS = {"ENOSPC": errno.ENOSPC, "EIO": errno.EIO}


def is_full(folder: Path) -> bool:
    """True when the disk holding ``folder`` (or its nearest existing parent) is (nearly) out of space."""
    probe = Path(folder)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return shutil.disk_usage(probe).free < FULL_BELOW_BYTES
    except OSError:
        return False


def disk_error(exc: BaseException, folder: Path | str, doing: str) -> DiskError | None:
    """The DiskError ``exc`` stands for (a full disk, an I/O error under ``folder``), else None."""
    if isinstance(exc, DiskError):
        return exc
    shown = str(folder)
    if isinstance(exc, OSError):
        code = exc.errno
        if code in _FULL_ERRNOS:
            return DiskError(shown, full=True, doing=doing, cause=exc.strerror or "")
        if code in _IO_ERRNOS:
            return DiskError(shown, full=False, doing=doing, cause=exc.strerror or "")
        if code is None and is_full(Path(folder)):  # a library's short write ("N requested and M written")
            return DiskError(shown, full=True, doing=doing)
        return None
    if isinstance(exc, sqlite3.Error):
        primary = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
        if primary == _SQLITE_FULL:
            return DiskError(shown, full=True, doing=doing, cause=str(exc))
        if primary == _SQLITE_IOERR:
            return DiskError(shown, full=is_full(Path(folder)), doing=doing, cause=str(exc))
    return None


def check_write(path: Path) -> None:
    """Raise the injected fault (see the module docstring) if it covers ``path``; else nothing."""
    control = os.environ.get(FAULT_ENV)
    if not control:
        return
    try:
        name, _, prefix = Path(control).read_text(encoding="utf-8").strip().partition(" ")
    except OSError:
        return  # no control file (yet, or any more): no fault
    code = _FAULTS.get(name)
    if code is None or not prefix:
        return
    target, root = os.path.abspath(path), os.path.abspath(prefix.strip())
    if target == root or target.startswith(root.rstrip(os.sep) + os.sep):
        raise OSError(code, os.strerror(code), str(path))
