"""What the earlier turns of a conversation are worth: a conversation set asked with and without its history.

    .venv/bin/python benchmarks/measure_followups.py [SET_DIR] [--embedder]

SET_DIR (default: tests/data/conversations) is a set in the FORMAT.md shape (its corpus a
``corpus.jsonl`` or a ``kb/`` folder: ``benchmarks/helpcentre`` works too) whose questions carry a
``history`` field (a question without one is left out) and, in ``metadata``, its ``pattern`` (else its
``kind``) and what resolving it must carry: ``carries`` (a text the resolved question must hold;
null: nothing may be carried, a topic switch) or ``candidates`` (the doc_ids an ``ambiguous_subject``
refusal must list); a set without them is scored on its outcomes only. The corpus is ingested once
into a temporary store (lexical recall; ``--embedder`` adds the configured embedder); each question
is asked through ``Service.ask`` with its history and without it. Printed, per pattern and overall:

- answer rate on ``expect=answer``, evidence hit (the evidence holds a gold answer, FORMAT.md), answer
  hit (the answer's own text holds one: what a user who reads only the answer gets) and answer token
  recall (score.py's: the share of a gold answer's tokens the answer holds, the best gold, in %);
- right document: the answer's first citation is in a gold document (not the look-alike product's);
- correct refusals on ``expect=refuse`` (with history: an ``ambiguous_subject`` listing the candidates);
- wrong carries: a topic switch that was given something, or a resolved question that lacks what had
  to be carried (with history only; without it nothing is ever carried);
- missed carries: a follow-up left as asked.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.agent.tuning.evaluate import set_corpus
from evidence_loop.policies.config import Policy
from evidence_loop.tools.parse.sources import collect

DEFAULT_SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "conversations"


def _flat(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


def evidence_hit(outcome: Outcome, gold: Sequence[str]) -> bool:
    """The reading material holds a gold answer (NFKC, lower case, no whitespace), as score.py reads it."""
    if outcome.status != "answered":
        return False
    held = _flat(" ".join(e.text for e in outcome.evidence))
    return any(_flat(g) in held for g in gold)


def answer_hit(outcome: Outcome, gold: Sequence[str]) -> bool:
    """The answer's own text holds a gold answer, read as ``evidence_hit`` reads the evidence."""
    if outcome.answer is None:
        return False
    held = _flat(outcome.answer.text)
    return any(_flat(g) in held for g in gold)


def right_document(outcome: Outcome, gold_docs: Sequence[str]) -> bool:
    """Answered, and the answer's first sentence is cited from a gold document."""
    if outcome.answer is None or not outcome.answer.citations:
        return False
    return outcome.answer.citations[0].doc_id in gold_docs


_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_STOPWORDS = frozenset(  # score.py's
    "a an and are as at be by for from in is it of on or that the this to was were with you your can "
    "will".split()
)


def _tokens(text: str) -> Counter[str]:
    return Counter(
        t for t in _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower()) if t not in _STOPWORDS
    )


def answer_recall(outcome: Outcome, gold: Sequence[str]) -> float:
    """score.py's answer token recall: the best share of a gold answer's tokens the answer holds."""
    have = _tokens(outcome.answer.text if outcome.answer is not None else "")
    shares = [
        sum(min(n, have[t]) for t, n in want.items()) / want.total() for want in map(_tokens, gold) if want
    ]
    return max(shares, default=0.0)


def refused_rightly(outcome: Outcome, candidates: Sequence[str], with_history: bool) -> bool:
    """A refusal; with history, one whose ``ambiguous_subject`` pieces list every candidate."""
    if outcome.status != "insufficient_evidence":
        return False
    listed = {m.doc_id for m in outcome.missing if m.kind == "ambiguous_subject"}
    return set(candidates) <= listed if with_history else True


def carry_verdict(outcome: Outcome, meta: dict[str, object]) -> str:
    """ "ok", "wrong" (carried where nothing may be, or not what had to be) or "missed"."""
    resolved = outcome.resolved_question
    if "candidates" in meta or "carries" not in meta:
        return "ok"
    carries = meta.get("carries")
    if carries is None:
        return "ok" if resolved is None else "wrong"
    if resolved is None:
        return "missed"
    return "ok" if str(carries).lower() in resolved.lower() else "wrong"


def run(
    service: Service, questions: list[dict[str, object]], with_history: bool
) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for q in questions:
        meta = dict(q.get("metadata") or {})  # type: ignore[call-overload]
        history = list(q["history"]) if with_history else None  # type: ignore[call-overload]
        outcome = service.ask(str(q["question"]), history=history)
        for key in (str(meta.get("pattern") or meta.get("kind") or q["expect"]), "all"):
            row = counts[key]
            row["questions"] += 1
            if q["expect"] == "answer":
                row["answerable"] += 1
                row["answered"] += outcome.status == "answered"
                gold = list(q.get("gold_answers") or [])  # type: ignore[call-overload]
                row["hit"] += evidence_hit(outcome, gold)
                row["answer_hit"] += answer_hit(outcome, gold)
                row["recall"] += round(100 * answer_recall(outcome, gold))
                row["doc"] += right_document(outcome, list(q.get("gold_doc_ids") or []))  # type: ignore[call-overload]
            else:
                row["refusable"] += 1
                wanted = list(meta.get("candidates") or [])  # type: ignore[call-overload]
                row["refused"] += refused_rightly(outcome, wanted, with_history)
            verdict = carry_verdict(outcome, meta) if with_history else "ok"
            row["wrong"] += verdict == "wrong"
            row["missed"] += verdict == "missed"
    return counts


def _mean(total: int, d: int) -> str:
    return f"{total / d:.1f}" if d else "-"


def _rate(n: int, d: int) -> str:
    return f"{n}/{d} ({n / d:.0%})" if d else "-"


def print_table(with_h: dict[str, dict[str, int]], without: dict[str, dict[str, int]]) -> None:
    head = ("pattern", "n", "answered (none / history)", "evidence hit (none / history)",
            "answer hit (none / history)", "answer token recall % (none / history)",
            "right document (none / history)", "right refusals (none / history)", "wrong carries",
            "missed")  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in sorted(with_h, key=lambda k: (k == "all", k)):
        a, b = without[key], with_h[key]
        cells = (
            key,
            str(b["questions"]),
            f"{_rate(a['answered'], a['answerable'])} / {_rate(b['answered'], b['answerable'])}",
            f"{_rate(a['hit'], a['answerable'])} / {_rate(b['hit'], b['answerable'])}",
            f"{_rate(a['answer_hit'], a['answerable'])} / {_rate(b['answer_hit'], b['answerable'])}",
            f"{_mean(a['recall'], a['answerable'])} / {_mean(b['recall'], b['answerable'])}",
            f"{_rate(a['doc'], a['answerable'])} / {_rate(b['doc'], b['answerable'])}",
            f"{_rate(a['refused'], a['refusable'])} / {_rate(b['refused'], b['refusable'])}",
            str(b["wrong"]),
            str(b["missed"]),
        )
        print("| " + " | ".join(cells) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set_dir", type=Path, nargs="?", default=DEFAULT_SET)
    parser.add_argument("--embedder", action="store_true", help="the configured embedder (default: lexical)")
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a policy field, e.g. followup_kinds=off",
    )
    args = parser.parse_args(argv)
    lines = (args.set_dir / "questions.jsonl").read_text("utf-8").splitlines()
    questions = [q for q in map(json.loads, filter(str.strip, lines)) if q.get("history")]
    with tempfile.TemporaryDirectory(prefix="followups-") as tmp:
        embedder = "configured" if args.embedder else None
        policy = Policy().with_overrides(dict(pair.split("=", 1) for pair in args.policy))
        with Service.open(
            Path(tmp) / "index", create=True, tracing_on=False, embedder=embedder, llm=None, policy=policy
        ) as service:
            service.ingest(collect([set_corpus(args.set_dir)]).documents)
            without = run(service, questions, with_history=False)
            with_h = run(service, questions, with_history=True)
    print(f"{args.set_dir.name}: {len(questions)} follow-ups, asked alone and with their history\n")
    print_table(with_h, without)
    return 0


if __name__ == "__main__":
    sys.exit(main())
