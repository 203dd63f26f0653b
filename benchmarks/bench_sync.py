"""What re-syncing a knowledge base costs against ingesting it whole: tara_zh with 1% of it changed.

    .venv/bin/python benchmarks/bench_sync.py [SET_DIR ...] [--changed 0.01] [--embedder lexical|cached|model]

For each evaluation set (default: tara_zh in ../shared/eval beside the clone, or in EVLOOP_EVAL_DIR),
in this process:

1. **full**: ``corpus.jsonl`` ingested into a fresh index folder, as ``evloop ingest`` does (one
   source, its documents recorded as coming from it);
2. ``--changed`` of the documents (every 100th, for 1%) get one sentence more; the corpus file is
   written again beside the first;
3. **re-sync**: the changed file ingested into the same index with ``--prune``, as a second
   ``evloop ingest corpus.jsonl --prune`` does: the changed documents become new versions, the rest
   is left alone.

Each step is timed (wall and this process's CPU), and the texts each one hands the embedder are
counted (``units embedded``: with the model, that count is the cost). The embedder:

- ``lexical`` (default): none, so the times are the store's own work (reading, hashing, writing
  rows, rebuilding the index of the new generation);
- ``cached``: the configured model behind the shared vector cache (``evloop eval --embed-cache``),
  warmed with the changed texts too, so that neither step pays for the model and the times compare
  the store's work with vectors. The model's own CPU time per unit is then measured on up to
  ``SAMPLE`` of the changed units (the model alone, no cache), and each step's cost with the model
  is its measured CPU plus its units embedded times that: what a user without a cache pays;
- ``model``: the configured model, no cache, for real (a full ingest of tara_zh embeds its 7,100
  units: about 12 minutes of a core, more on a busy machine).

The table gives each step and re-sync / full for wall time, CPU time, units embedded and, with
``cached``, the CPU with the model. The corpus's scale (measured by a first ingest, not by a 1%
change) is left out of both steps.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from common import EVAL_DIR, Row, print_table

from evidence_loop.agent import settings
from evidence_loop.tools.models.embedder import build_embedder
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.models.embedding import Embedder, EmbedderIdentity, Progress, Vectors
from evidence_loop.tools.parse.sources import collect, source_name
from evidence_loop.tools.store.folder import IngestReport, Store

DEFAULT_SETS = (EVAL_DIR / "tara_zh",)
TARGET = 0.05  # re-sync / full
CACHE = Path("~/.cache/evloop/embeddings.sqlite3").expanduser()
SAMPLE = 100  # changed units the model embeds alone, to price a unit
EXTRA = "本文档已于近日更新，内容以最新版本为准。"


class Counting:
    """An embedder that counts the passages it is handed, then embeds them with ``inner``."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.passages_seen = 0

    @property
    def identity(self) -> EmbedderIdentity:
        return self.inner.identity

    def queries(self, texts: Sequence[str]) -> Vectors:
        return self.inner.queries(texts)

    def passages(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        self.passages_seen += len(texts)
        return self.inner.passages(texts, progress)


@dataclass(frozen=True, slots=True)
class Step:
    wall: float
    cpu: float
    embedded: int
    report: IngestReport


def changed_corpus(corpus: Path, out: Path, share: float) -> list[str]:
    """``corpus`` with every 1/share-th record one sentence longer, written to ``out``; their doc_ids."""
    every = max(1, round(1 / share))
    changed: list[str] = []
    with corpus.open(encoding="utf-8") as lines, out.open("w", encoding="utf-8") as written:
        for n, line in enumerate(line for line in lines if line.strip()):
            record = json.loads(line)
            if n % every == every - 1:
                record["text"] = record["text"].rstrip() + "\n" + EXTRA + "\n"
                changed.append(record["doc_id"])
            written.write(json.dumps(record, ensure_ascii=False) + "\n")
    return changed


def sync(index: Path, corpus: Path, source: str, counting: Counting | None) -> Step:
    """``evloop ingest CORPUS --prune`` as the command runs it, timed."""
    found = collect([corpus], max_bytes=1 << 30)
    sources = dict.fromkeys(found.sources, source)
    seen = counting.passages_seen if counting else 0
    wall, cpu = time.perf_counter(), time.process_time()
    with Store.open(index, create=True, embedder=counting) as store:
        report = store.ingest(found.documents, max_bytes=1 << 30, sources=sources, prune=[source])
    embedded = (counting.passages_seen - seen) if counting else 0
    return Step(time.perf_counter() - wall, time.process_time() - cpu, embedded, report)


def embedder_for(kind: str, warm: Sequence[str]) -> Counting | None:
    if kind == "lexical":
        return None
    config = EmbedConfig.from_env(settings.current().environ())
    if kind == "cached":
        config = replace(config, cache=str(CACHE))
    built = build_embedder(config)
    if built is None:
        raise SystemExit("no embedder is configured (EVLOOP_EMBEDDER=none?)")
    if warm:
        built.passages(list(warm))  # the cache holds the changed units too
    return Counting(built)


def model_cpu_per_unit(texts: Sequence[str]) -> float:
    """CPU seconds the configured model alone (no cache) spends on one unit, over ``texts``."""
    config = replace(EmbedConfig.from_env(settings.current().environ()), cache="")
    model = build_embedder(config)
    assert model is not None
    model.passages(["warm up"])
    sample = list(texts[:SAMPLE])
    started = time.process_time()
    model.passages(sample)
    return (time.process_time() - started) / max(len(sample), 1)


def measure(set_dir: Path, share: float, kind: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="evloop-bench-sync-") as tmp:
        root = Path(tmp)
        corpus = root / "corpus.jsonl"
        corpus.write_bytes((set_dir / "corpus.jsonl").read_bytes())
        edited = root / "edited" / "corpus.jsonl"
        edited.parent.mkdir()
        changed = changed_corpus(corpus, edited, share)
        warm = _changed_units(edited, set(changed)) if kind == "cached" else []
        counting = embedder_for(kind, warm)
        source = source_name(corpus)
        full = sync(root / "index", corpus, source, counting)
        again = sync(root / "index", edited, source, counting)
    assert again.report.changed == len(changed) and again.report.retired == 0
    per_unit = model_cpu_per_unit(warm) if kind == "cached" else 0.0
    return {
        "per_unit": per_unit,
        "documents": full.report.added,
        "changed": again.report.changed,
        "full_wall": full.wall,
        "full_cpu": full.cpu,
        "full_units": full.report.units,
        "full_embedded": full.embedded,
        "sync_wall": again.wall,
        "sync_cpu": again.cpu,
        "sync_units": again.report.units,
        "sync_embedded": again.embedded,
    }


def _changed_units(corpus: Path, doc_ids: set[str]) -> list[str]:
    """The unit texts of the changed documents, to warm the cache with."""
    from evidence_loop.tools.parse import parse_document

    docs = [d for d in collect([corpus], max_bytes=1 << 30).documents if d.doc_id in doc_ids]
    return [u.text for d in docs for u in parse_document(d).units]


def _share(a: float, b: float) -> str:
    return f"{a / b:.2%}" if b > 0 else "-"


ROWS: tuple[Row, ...] = (
    ("documents / changed", lambda m: f"{m['documents']:.0f} / {m['changed']:.0f}", "1% changed"),
    (
        "full: wall / CPU (s)",
        lambda m: f"{m['full_wall']:.2f} / {m['full_cpu']:.2f}",
        "ingest into a new index",
    ),
    (
        "re-sync: wall / CPU (s)",
        lambda m: f"{m['sync_wall']:.2f} / {m['sync_cpu']:.2f}",
        "same index, --prune",
    ),
    ("units written: full / re-sync", lambda m: f"{m['full_units']:.0f} / {m['sync_units']:.0f}", ""),
    ("units embedded: full / re-sync", lambda m: f"{m['full_embedded']:.0f} / {m['sync_embedded']:.0f}", ""),
    ("re-sync / full, wall", lambda m: _share(m["sync_wall"], m["full_wall"]), f"<= {TARGET:.0%}"),
    ("re-sync / full, CPU", lambda m: _share(m["sync_cpu"], m["full_cpu"]), f"<= {TARGET:.0%}"),
    (
        "re-sync / full, embedded",
        lambda m: _share(m["sync_embedded"], m["full_embedded"]) if m["full_embedded"] else "(lexical)",
        f"<= {TARGET:.0%}",
    ),
    (
        "model CPU per unit (s)",
        lambda m: f"{m['per_unit']:.4f}" if m["per_unit"] else "-",
        "cached: measured",
    ),
    ("with the model: full / re-sync (CPU s)", lambda m: _priced(m), "CPU + embedded x per unit"),
    ("re-sync / full, with the model", lambda m: _priced_share(m), f"<= {TARGET:.0%}"),
)


def _priced(m: dict[str, float]) -> str:
    if not m["per_unit"]:
        return "-"
    full = m["full_cpu"] + m["full_embedded"] * m["per_unit"]
    again = m["sync_cpu"] + m["sync_embedded"] * m["per_unit"]
    return f"{full:.1f} / {again:.1f}"


def _priced_share(m: dict[str, float]) -> str:
    if not m["per_unit"]:
        return "-"
    full = m["full_cpu"] + m["full_embedded"] * m["per_unit"]
    return _share(m["sync_cpu"] + m["sync_embedded"] * m["per_unit"], full)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sets", nargs="*", type=Path, default=list(DEFAULT_SETS))
    parser.add_argument(
        "--changed", type=float, default=0.01, help="share of documents changed (default: 0.01)"
    )
    parser.add_argument("--embedder", choices=("lexical", "cached", "model"), default="lexical")
    args = parser.parse_args(argv)
    results = {set_dir.name: measure(set_dir, args.changed, args.embedder) for set_dir in args.sets}
    print(f"embedder: {args.embedder}")
    print_table(ROWS, results)


if __name__ == "__main__":
    main()
