"""``evloop calibrate --feedback``: refit the judge from the runs reviewers marked (agent.feedback_fit)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evidence_loop.agent.commands.feedback import since_day
from evidence_loop.agent.commands.session import policy_from_args
from evidence_loop.agent.commands.trace import trace_store
from evidence_loop.agent.feedback_fit import (
    MIN_PER_KIND,
    OperatingPoint,
    best_rate,
    cross_validated,
    fit_feedback,
    recorded_point,
    shortfall,
)
from evidence_loop.agent.feedback_reviews import DISAGREE, Reviews, reviews
from evidence_loop.tools.errors import InputError


def add_feedback_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--feedback", action="store_true", help="fit the judge on reviewed runs (evloop feedback list)"
    )
    parser.add_argument("--since", metavar="DAY", default=None, help="with --feedback: reviews from DAY on")
    parser.add_argument(
        "--traces", type=Path, metavar="DIR", default=None, help="trace folder (default: INDEX/traces)"
    )
    parser.add_argument(
        "--answer-rate",
        type=float,
        default=None,
        metavar="R",
        help="with --feedback: the share of answerable runs to answer (default: the rate whose "
        "cross-validated point decides the most reviewed runs right)",
    )


def run_feedback(args: argparse.Namespace) -> int:
    """Report the fit's cross-validated operating point against the current one; write it with --out."""
    if args.set_dirs or args.self_:
        raise InputError("--feedback fits on reviewed runs; give it no SET_DIR and not --self")
    policy = policy_from_args(args)
    if args.answer_rate is not None and not 0.5 <= args.answer_rate < 1.0:
        raise InputError(f"--answer-rate must be from 0.5 to below 1, not {args.answer_rate}")
    with trace_store(args) as store:
        found = reviews(store, since_day(args.since))
    runs = found.runs
    _print_reviews(found)
    more_yes, more_no = shortfall(runs)
    if more_yes or more_no:
        raise InputError(
            f"too few reviews to fit: need at least {MIN_PER_KIND} runs that should be answered and "
            f"{MIN_PER_KIND} that should be refused; review {more_yes} more of the first kind and "
            f"{more_no} more of the second"
        )
    if args.answer_rate is None:
        rate, points = best_rate(runs, policy.refusal_bias, args.l2)
    else:
        rate = args.answer_rate
        points = {rate: cross_validated(runs, rate, policy.refusal_bias, args.l2)}
    current, fitted = recorded_point(runs), points[rate]
    _print_points(current, points, rate if args.answer_rate is None else None)
    if args.out is None:
        print("no policy written; add --out POLICY.json to write one")
        return 0
    model = fit_feedback(runs, args.l2)
    document = {
        "judge": model.as_dict(),
        "policy": {"answer_rate": str(rate)},
        "report": {
            "feedback": {
                "current": _as_dict(current),
                "cross_validated": _as_dict(fitted),
                "left_out": dict(sorted(found.left_out.items())),
                "chain": found.chain.summary(),
            }
        },
    }
    tmp = args.out.with_suffix(args.out.suffix + ".part")
    tmp.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(f"wrote {args.out}; serve it with `evloop serve --policy-file {args.out}`")
    return 0


def _print_reviews(found: Reviews) -> None:
    """What the fit rests on: the log's chain, the usable runs, and why the others were left out."""
    print(found.chain.summary())
    left_out = ", ".join(f"{n} {why}" for why, n in sorted(found.left_out.items()))
    print(f"{len(found.runs)} reviewed runs usable" + (f" (left out: {left_out})" if left_out else ""))
    if found.left_out[DISAGREE]:
        print(
            f"reviewers disagree on {found.left_out[DISAGREE]} runs (each reviewer's latest verdict "
            "stands; a run whose reviewers give it different labels is not fitted on)"
        )


def _print_points(current: OperatingPoint, points: dict[float, OperatingPoint], chosen: float | None) -> None:
    print("policy (fits: 5-fold cross-validated)".ljust(38) + "reviews".rjust(8) + "answer".rjust(8), end="")
    print("refusal".rjust(9) + "correct".rjust(9))
    named = [(f"fitted at rate {r:g}" + (" (chosen)" if r == chosen else ""), p) for r, p in points.items()]
    for name, line in [("current (as the runs went)", current), *named]:
        print(
            name.ljust(38) + f"{line.reviews:>8}{line.answer:>8.3f}{line.refusal:>9.3f}{line.correct:>9.3f}"
        )


def _as_dict(line: OperatingPoint) -> dict[str, float | int]:
    return {"reviews": line.reviews, "answer": line.answer, "refusal": line.refusal, "correct": line.correct}
