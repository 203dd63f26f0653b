"""Split a labelled set into a fitting half and a checking half, as evaluation folders (FORMAT.md).

    python benchmarks/set_halves.py benchmarks/helpcentre --out /tmp/halves
    evloop calibrate ../shared/eval/tara_zh /tmp/halves/helpcentre_fit --out j.json
    evloop eval /tmp/halves/helpcentre_check --policy-file j.json

The set is a folder with ``questions.jsonl`` and either ``corpus.jsonl`` or a ``kb/`` folder of pages
(read as ``evloop ingest`` reads a folder: doc_id is the path below it without the extension). Questions
are taken in id order and dealt alternately to the two halves within each (kind, expect, lang) group
(``metadata.kind``), so each half holds every kind: the judge is fitted on one and checked on the other.
Each half's ``corpus.jsonl`` holds the whole corpus. Prints the questions in each half.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from evidence_loop.tools.parse.sources import collect


def corpus_lines(set_dir: Path) -> list[str]:
    """The set's corpus as ``corpus.jsonl`` lines."""
    if (set_dir / "corpus.jsonl").exists():
        return (set_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    docs = collect([set_dir / "kb"]).documents
    return [
        json.dumps(
            {"doc_id": d.doc_id, "text": d.text, "title": d.title, "version": d.version, "format": d.format},
            ensure_ascii=False,
        )
        for d in docs
    ]


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
    lines = corpus_lines(args.set_dir)
    questions = [json.loads(line) for line in (args.set_dir / "questions.jsonl").open(encoding="utf-8")]
    name = args.set_dir.resolve().name
    for suffix, part in zip(("fit", "check"), halves(questions), strict=True):
        folder = args.out / f"{name}_{suffix}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        body = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in part)
        (folder / "questions.jsonl").write_text(body, encoding="utf-8")
        print(f"{folder}: {len(part)} questions ({dict(Counter(q['expect'] for q in part))})")


if __name__ == "__main__":
    main()
