"""``evloop demo``: ingest the bundled sample help centre and show what recall finds in it."""

from __future__ import annotations

import argparse

from agent.commands.common import (
    Store,
    Subparsers,
    add_command,
    add_index_option,
    hit_line,
    resolve_index,
    summary_line,
)
from agent.sample import load_sample_kb
from tools.snapshot import Snapshot

DESCRIPTION = """\
Ingest the bundled sample knowledge base (a fictional bilingual help centre: course policies,
warranty tables, returns, Wi-Fi troubleshooting, a shipping page in two versions and one
staff-only document) into the index, then run a few Chinese and English searches and print the
top hits. Running it again leaves unchanged documents as they are."""

EPILOG = """\
examples:
  evloop demo
  evloop demo --index /tmp/demo-index"""

# (query, caller groups): the last pair shows the same query with and without access to the staff-only page.
DEMO_SEARCHES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("可以免费改期几次？", ()),
    ("How many times can I reschedule for free?", ()),
    ("LM-S10 整机保修多久", ()),
    ("Which items cannot be returned within 7 days?", ()),
    ("The device cannot connect to Wi-Fi", ()),
    ("员工购机优惠码", ()),
    ("员工购机优惠码", ("staff",)),
)
HITS_PER_SEARCH = 3


def register(subparsers: Subparsers) -> None:
    """Add the ``demo`` command."""
    parser = add_command(
        subparsers,
        "demo",
        summary="ingest the sample help centre and search it",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    add_index_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Ingest the sample documents, print the summary, then the searches."""
    index = resolve_index(args.index)
    documents = load_sample_kb()
    with Store.open(index, create=True) as store:
        report = store.ingest(documents, replace=True)
        print(summary_line(report, index))
        show_searches(store.snapshot())
    return 0


def show_searches(snapshot: Snapshot) -> None:
    """Each demo query, who asks it, and its top hits."""
    for query, groups in DEMO_SEARCHES:
        caller = f"groups={','.join(groups)}" if groups else "public"
        print(f"\nsearch: {query}  ({caller})")
        hits = snapshot.search(query, HITS_PER_SEARCH, groups=groups)
        for hit in hits:
            print(hit_line(snapshot, hit, width=100))
        if not hits:
            print("   (no hits)")
