"""``evloop demo``: ingest the bundled sample help centre, ask it questions, say where the traces are."""

from __future__ import annotations

import argparse
from pathlib import Path

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    hit_line,
    resolve_index,
    summary_line,
)
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.loop.render import brief_outcome, render_outcome
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy

DESCRIPTION = """\
Ingest the bundled sample knowledge base (a fictional bilingual help centre: course policies,
warranty tables, returns, Wi-Fi troubleshooting, a shipping page in two versions and one
staff-only document) into the index, ask it a few Chinese and English questions, and print each
outcome in a line or two: answered with one citation, or refused with what is missing. Every run
is traced; the last lines say where and how to replay one. --verbose adds the raw searches, every
evidence window and each step that grew it. Running it again leaves the documents as they are."""

EPILOG = """\
examples:
  evloop demo
  evloop demo --verbose
  evloop demo --index /tmp/demo-index"""

# (query, caller groups): the last pair shows the same query with and without access to the staff-only page.
DEMO_SEARCHES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("可以免费改期几次？", ()),
    ("The device cannot connect to Wi-Fi", ()),
)
HITS_PER_SEARCH = 3

# An answer that needed the scope sentence and the referenced rule, the same question where the
# referenced rule is missing (a refusal naming it), a table row with its header, a model the corpus
# does not cover, a staff-only page asked by the public and by staff, and two comparisons: of two
# plans with a page each (both cited), and of a plan with one and a plan without (refused, naming it).
DEMO_QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("我的常规班已经开课了，还能免费改期一次吗？", ()),
    ("My regular class has already started. Can I still reschedule once for free?", ()),
    ("LM-S10 的整机保修期是多久？", ()),
    ("How long is the whole-unit warranty for the LM-S10?", ()),
    ("LM-Z900 的整机保修期是多久？", ()),
    ("员工内部购机优惠是多少？", ()),
    ("员工内部购机优惠是多少？", ("staff",)),
    ("基础会员和尊享会员有什么区别？", ()),
    ("What is the difference between the Essential plan and the Family plan?", ()),
)
SLIDE_QUESTION: tuple[str, tuple[str, ...]] = ("学员可以免费改期几次？", ())
TIGHT = Policy(window_budget=70, seed_k=1)


def register(subparsers: Subparsers) -> None:
    """Add the ``demo`` command."""
    parser = add_command(
        subparsers,
        "demo",
        summary="ingest the sample help centre and ask it questions",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    add_index_option(parser)
    parser.add_argument(
        "--verbose", action="store_true", help="also the searches, the evidence windows and how each grew"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Ingest the sample documents, ask the sample questions, say where their traces are."""
    index = resolve_index(args.index)
    documents = load_sample_kb()
    service = Service.open(index, create=True)
    try:
        report = service.ingest(documents, replace=True)
        names = len({doc.doc_id for doc in documents})
        print(f"The sample help centre ({names} documents, Chinese and English) in {index}:")
        print(f"  {summary_line(report, index)}")
        if args.verbose:
            show_searches(service)
        outcomes = [service.ask(question, groups) for question, groups in DEMO_QUESTIONS]
    finally:
        service.close()
    for n, ((_, groups), outcome) in enumerate(zip(DEMO_QUESTIONS, outcomes, strict=True), start=1):
        print()
        print(render_outcome(outcome) if args.verbose else _brief(n, outcome, groups))
    if args.verbose:
        show_slide(index)
    print()
    for line in _where_next(index, outcomes):
        print(line)
    return 0


def _brief(n: int, outcome: Outcome, groups: tuple[str, ...]) -> str:
    asked = f"  (asked as group {', '.join(groups)})" if groups else ""
    lines = brief_outcome(outcome)
    return "\n".join([f"{n}. {lines[0]}{asked}", *(f"   {line}" for line in lines[1:])])


def _where_next(index: Path, outcomes: list[Outcome]) -> list[str]:
    flag = f"--index {index}"
    return [
        f"Every run above is traced in {index / 'traces'}: list them, verify one, or re-run it as it ran:",
        f"  evloop trace list {flag}",
        f"  evloop trace verify {outcomes[0].run_id} {flag}",
        f"  evloop replay {outcomes[0].run_id} {flag}",
        f'Ask your own: evloop ask "LM-S10 的电池保修多久？" {flag}',
        "The searches, every evidence window and how it grew: evloop demo --verbose",
    ]


def show_searches(service: Service) -> None:
    """Each demo query, who asks it, and its top hits."""
    snapshot = service.snapshot()
    for query, groups in DEMO_SEARCHES:
        caller = f"groups={','.join(groups)}" if groups else "public"
        print(f"\nsearch: {query}  ({caller})")
        hits = service.search(query, HITS_PER_SEARCH, groups, snapshot=snapshot)
        for hit in hits:
            print(hit_line(snapshot, hit, width=100))
        if not hits:
            print("   (no hits)")


def show_slide(index: Path) -> None:
    """The same kind of question under a tight window budget: the window slides."""
    print(
        f"\nWith a tight window budget ({TIGHT.window_budget} characters) the section no longer fits whole,"
    )
    print("so the window slides: left for the scope sentence, right for the rule it refers to.")
    tight = Service.open(index, policy=TIGHT)
    try:
        print(render_outcome(tight.ask(*SLIDE_QUESTION)))
    finally:
        tight.close()
