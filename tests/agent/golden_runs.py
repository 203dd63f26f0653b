"""The golden runs: fixed questions against the bundled sample knowledge base, with fixed ids and clock.

``python -m tests.agent.golden_runs`` rewrites ``tests/agent/golden/*.jsonl`` (after a deliberate change
of the loop's behaviour); the tests replay the committed files and expect them identical, except
``diverge-*`` which is replayed against an edited corpus and must report its first divergent step.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.loop.runtime import Deps
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces import TraceStore
from tests.legacy_parse import legacy_parse

GOLDEN = Path(__file__).parent / "golden"
FIXED_TIME = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
RUNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("golden-reschedule-zh", "我的常规班已经开课了，还能免费改期一次吗？", ()),
    ("golden-warranty-en", "How long is the whole-unit warranty for the LM-S10?", ()),
    ("golden-uncovered-model", "LM-Z900 的整机保修期是多久？", ()),
    ("golden-staff", "员工内部购机优惠是多少？", ("staff",)),
    ("diverge-shipping", "满多少元可以免费配送？", ()),
)
# The edit made after the diverging run was recorded: the free-shipping threshold changes again.
EDITED_SHIPPING = DocumentInput(
    doc_id="shipping-zh",
    version="3",
    title="配送说明",
    format="markdown",
    text="# 配送说明\n\n## 运费\n\n订单实付满59元免运费，未满59元收取运费8元。\n",
)


# The sample help centre's pages when the golden and the written traces were recorded. Pages added
# since (the subscription plans) change recall's statistics, so those runs replay against these only.
RECORDED_DOC_IDS = frozenset(
    {
        "course-policy-zh", "course-policy-en", "enrolled-reschedule-zh", "warranty-zh", "warranty-en",
        "returns-zh", "returns-en", "troubleshoot-wifi-en", "troubleshoot-wifi-zh", "shipping-zh",
        "staff-discount-zh", "faq-account-zh", "faq-devices-en", "contact-zh",
    }
)  # fmt: skip


def recorded_sample_kb() -> list[DocumentInput]:
    """The sample KB as the recorded runs read it: its documents of ``RECORDED_DOC_IDS``."""
    return [d for d in load_sample_kb() if d.doc_id in RECORDED_DOC_IDS]


def sample_store(root: Path) -> Store:
    """The store every golden run was recorded against: the sample KB as it was, ingested in one batch
    as evloop parsed it then (its HTML pages stored as their source: ``tests.legacy_parse``)."""
    store = Store.open(root, create=True)
    store.ingest(recorded_sample_kb(), parse=legacy_parse)
    return store


def record(out: Path) -> None:
    """Record every golden run into ``out`` as one trace file each."""
    with tempfile.TemporaryDirectory() as tmp:
        store = sample_store(Path(tmp) / "index")
        traces = TraceStore(Path(tmp) / "traces")
        for run_id, question, groups in RUNS:
            deps = Deps(now=lambda: FIXED_TIME, new_run_id=lambda rid=run_id: rid)  # type: ignore[misc]
            Service(store, traces=traces, deps=deps).ask(question, groups)
            (out / f"{run_id}.jsonl").write_bytes(traces.raw(run_id))
        store.close()


if __name__ == "__main__":
    GOLDEN.mkdir(exist_ok=True)
    record(GOLDEN)
    print(f"wrote {len(RUNS)} golden traces to {GOLDEN}")
