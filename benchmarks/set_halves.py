"""Split a labelled set into a fitting half and a checking half, as evaluation folders (FORMAT.md).

    python benchmarks/set_halves.py benchmarks/helpcentre --out /tmp/halves
    evloop calibrate ../shared/eval/tara_zh /tmp/halves/helpcentre_fit --out j.json
    evloop eval /tmp/halves/helpcentre_check --policy-file j.json

The set is a folder with ``questions.jsonl`` and either ``corpus.jsonl`` or a ``kb/`` folder of pages;
each half gets a copy of the whole corpus in the same form. Questions are taken in id order and dealt
alternately to the two halves within each (kind, expect, lang) group (``metadata.kind``), so each half
holds every kind: the judge is fitted on one and checked on the other. Prints the questions in each half.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any


def copy_corpus(set_dir: Path, folder: Path) -> None:
    """The set's corpus into ``folder``: its ``corpus.jsonl``, or its ``kb/`` tree."""
    if (set_dir / "corpus.jsonl").exists():
        shutil.copyfile(set_dir / "corpus.jsonl", folder / "corpus.jsonl")
    else:
        shutil.copytree(set_dir / "kb", folder / "kb", dirs_exist_ok=True)


def halves(questions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(fitting half, checking half): each (kind, expect, lang) group dealt alternately, in id order."""
    seen: Counter[tuple[str, str, str]] = Counter()
    fit, check = [], []
    for q in sorted(questions, key=lambda q: str(q["id"])):
        key = (str((q.get("metadata") or {}).get("kind", "")), str(q["expect"]), str(q.get("lang", "")))
        (fit if seen[key] % 2 == 0 else check).append(q)
        seen[key] += 1
    return fit, check


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set_dir", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="folder for SET_fit/ and SET_check/")
    args = parser.parse_args()
    questions = [json.loads(line) for line in (args.set_dir / "questions.jsonl").open(encoding="utf-8")]
    name = args.set_dir.resolve().name
    for suffix, part in zip(("fit", "check"), halves(questions), strict=True):
        folder = args.out / f"{name}_{suffix}"
        folder.mkdir(parents=True, exist_ok=True)
        copy_corpus(args.set_dir, folder)
        body = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in part)
        (folder / "questions.jsonl").write_text(body, encoding="utf-8")
        print(f"{folder}: {len(part)} questions ({dict(Counter(q['expect'] for q in part))})")


if __name__ == "__main__":
    main()
