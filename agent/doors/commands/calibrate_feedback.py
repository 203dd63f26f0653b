"""``evloop calibrate --feedback``: refit the judge from the runs reviewers marked
(agent.tuning.feedback_fit)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evidence_loop.agent.doors.commands.feedback import since_day
from evidence_loop.agent.doors.commands.session import policy_from_args
from evidence_loop.agent.doors.commands.trace import trace_store
from evidence_loop.agent.loop.calibrate import ANSWER_RATES
from evidence_loop.agent.tuning.feedback_choice import ALPHA, Choice, Curve, choose, curve
from evidence_loop.agent.tuning.feedback_fit import MIN_PER_KIND, OperatingPoint, fit_feedback, shortfall
from evidence_loop.agent.tuning.feedback_reviews import DISAGREE, Reviews, reviews
from evidence_loop.policies.judge_model import JudgeModel
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
        help="with --feedback: the share of answerable runs to answer (default: of the rates whose "
        "cross-validated gain over the current policy holds up, the one that decides the most "
        "reviewed runs right; none holding up keeps the current policy and writes nothing)",
    )


def run_feedback(args: argparse.Namespace) -> int:
    """Print the curve of the fit's cross-validated points against the current policy, the point
    chosen and why; write the fitted policy with --out unless the current one is kept."""
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
    given = args.answer_rate
    rates = sorted({*ANSWER_RATES, given}) if given is not None else list(ANSWER_RATES)
    points = curve(runs, policy.refusal_bias, args.l2, rates)
    if given is None:
        choice = choose(points)
    else:
        holds = next(p for p in points.points if p.rate == given).holds
        doubt = "" if holds else "; its gain over the current policy does not hold up"
        choice = Choice(given, f"took the fit at rate {given:g}, as --answer-rate says{doubt}")
    print_curve(points, choice.rate)
    print(choice.reason)
    if choice.rate is None:
        print("no policy written: serve the current one (--answer-rate R writes the fit at R anyway)")
        return 0
    if args.out is None:
        print("no policy written; add --out POLICY.json to write one")
        return 0
    _write(args.out, fit_feedback(runs, args.l2), choice, points, found)
    print(f"wrote {args.out}; serve it with `evloop serve --policy-file {args.out}`")
    return 0


def _write(out: Path, model: JudgeModel, choice: Choice, points: Curve, found: Reviews) -> None:
    fitted = next(p for p in points.points if p.rate == choice.rate)
    document = {
        "judge": model.as_dict(),
        "policy": {"answer_rate": str(choice.rate)},
        "report": {
            "feedback": {
                "current": _as_dict(points.current),
                "cross_validated": _as_dict(fitted.point),
                "gain": fitted.gain,
                "gain_lower_bound": fitted.gain_low,
                "chosen_because": choice.reason,
                "curve": [{"answer_rate": p.rate, **_as_dict(p.point)} for p in points.points],
                "left_out": dict(sorted(found.left_out.items())),
                "chain": found.chain.summary(),
            }
        },
    }
    tmp = out.with_suffix(out.suffix + ".part")
    tmp.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out)


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


def print_curve(points: Curve, chosen: float | None) -> None:
    """The curve of answer rate against refusal rate, each with its 95% interval, and each fitted
    point's gain in correct share over the current policy with its lower bound."""
    print(
        "answer rate against refusal rate, 5-fold cross-validated; [95% intervals]; gain: correct "
        f"share over the current policy on the same runs, its lower bound one-sided at {ALPHA:g} "
        f"shared among {len(points.points)} rates"
    )
    print("policy".ljust(30) + "reviews".rjust(8) + "answer".rjust(21) + "refusal".rjust(21), end="")
    print("correct".rjust(9) + "gain".rjust(8) + "lower".rjust(8))
    current = points.current
    print(
        "current (as the runs went)".ljust(30)
        + f"{current.reviews:>8}{_with(current.answer, points.current_answer)}"
        + f"{_with(current.refusal, points.current_refusal)}{current.correct:>9.3f}"
    )
    for p in points.points:
        name = f"fitted at rate {p.rate:g}" + (" (chosen)" if p.rate == chosen else "")
        print(
            name.ljust(30)
            + f"{p.point.reviews:>8}{_with(p.point.answer, p.answer)}{_with(p.point.refusal, p.refusal)}"
            + f"{p.point.correct:>9.3f}{p.gain:>+8.3f}{p.gain_low:>+8.3f}"
        )


def _with(share: float, interval: tuple[float, float]) -> str:
    return f"{share:.3f} [{interval[0]:.2f}-{interval[1]:.2f}]".rjust(21)


def _as_dict(line: OperatingPoint) -> dict[str, float | int]:
    return {"reviews": line.reviews, "answer": line.answer, "refusal": line.refusal, "correct": line.correct}
