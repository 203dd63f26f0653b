"""The manifest of a generation folder: the relative path, size and sha256 of every file in it.

    FOLDER/bm25/gen-000042/manifest.json
    {"format": 1, "files": {"data.csc.index.npy": {"size": 929780, "sha256": "9f2c..."}, ...}}

The store writes it last, after every other file of the generation and before the generation is
committed (tools/store/folder.py), so a committed generation always has one. It lists whatever the folder
holds, sub-folders included: a file a later change adds to a generation is covered without being
named here. Reading it back tells which file is missing, cut short, changed or not in the manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["MANIFEST_FILE", "FileDamage", "unlisted_files", "verify_manifest", "write_manifest"]

MANIFEST_FILE = "manifest.json"
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class FileDamage:
    """One problem with one file: ``path`` is relative to the generation folder, '/'-separated."""

    path: str
    problem: str


def _files(folder: Path) -> list[str]:
    """Every entry below ``folder`` that is not a folder (symlinks included, never followed), sorted."""
    found = []
    for root, dirs, names in os.walk(folder):
        base = Path(root)
        entries = names + [d for d in dirs if (base / d).is_symlink()]
        found += [(base / name).relative_to(folder).as_posix() for name in entries]
    return sorted(name for name in found if name != MANIFEST_FILE)


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def write_manifest(folder: Path) -> None:
    """Record every file now in ``folder``; call it once every other file of the folder is written."""
    files = {
        name: {"size": (folder / name).stat().st_size, "sha256": _sha256(folder / name)}
        for name in _files(folder)
    }
    record = {"format": _FORMAT, "files": files}
    (folder / MANIFEST_FILE).write_text(json.dumps(record, indent=1), encoding="utf-8")


def _read(folder: Path) -> dict[str, tuple[int, str]]:
    """The manifest's files as {path: (size, sha256)}; ValueError or OSError if it is not a manifest."""
    record = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    if not isinstance(record, dict) or record.get("format") != _FORMAT:
        raise ValueError("not a manifest of a known format")
    listed = record.get("files")
    if not isinstance(listed, dict):
        raise ValueError("no file list")
    files = {}
    for name, entry in listed.items():
        parts = PurePosixPath(name).parts
        if not parts or PurePosixPath(name).is_absolute() or ".." in parts or name == MANIFEST_FILE:
            raise ValueError(f"a path outside the folder: {name!r}")
        size, digest = (entry.get("size"), entry.get("sha256")) if isinstance(entry, dict) else (None, None)
        if not isinstance(size, int) or not isinstance(digest, str):
            raise ValueError(f"no size or sha256 for {name!r}")
        files[name] = (size, digest)
    return files


def verify_manifest(folder: Path, *, hashes: bool) -> list[FileDamage]:
    """Each listed file that is missing, not a regular file, of another size or (``hashes``) content.

    Without ``hashes`` only sizes are compared (a stat per file); with it every file is read once.
    """
    try:
        files = _read(folder)
    except FileNotFoundError:
        return [FileDamage(MANIFEST_FILE, "missing")]
    except (OSError, ValueError) as exc:
        return [FileDamage(MANIFEST_FILE, f"unreadable ({exc})")]
    damage = []
    for name, (size, digest) in files.items():
        path = folder / name
        if path.is_symlink() or not path.is_file():
            damage.append(FileDamage(name, "missing" if not path.exists() else "not a regular file"))
        elif (found := path.stat().st_size) != size:
            damage.append(FileDamage(name, f"{found} bytes, the manifest says {size}"))
        elif hashes and _sha256(path) != digest:
            damage.append(FileDamage(name, "sha256 differs from the manifest: same size, changed bytes"))
    return damage


def unlisted_files(folder: Path) -> list[FileDamage]:
    """Files in ``folder`` that its manifest does not list (nothing if the manifest cannot be read)."""
    try:
        listed = _read(folder)
    except (OSError, ValueError):
        return []
    return [FileDamage(name, "not in the manifest") for name in _files(folder) if name not in listed]
