"""Long-running commands move the loaded index out of the garbage collector's way."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.loop.runtime import freeze_heap
from evidence_loop.tools.store.folder import Store


def test_freeze_heap_moves_the_live_objects_to_the_permanent_generation() -> None:
    gc.unfreeze()
    held = [object() for _ in range(1000)]
    freeze_heap()
    assert gc.get_freeze_count() >= len(held)


def test_batch_answers_with_the_index_frozen(tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Store.open(index, create=True) as store:
        store.ingest(load_sample_kb())
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "q1", "question": "LM-S10 的整机保修期是多久？"}) + "\n", encoding="utf-8"
    )
    gc.unfreeze()
    assert main(["batch", str(questions), "--out", str(tmp_path / "out.jsonl"), "--index", str(index)]) == 0
    assert gc.get_freeze_count() > 0
    (row,) = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert row["status"] == "answered"
