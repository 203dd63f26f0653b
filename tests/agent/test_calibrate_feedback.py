"""``evloop calibrate --feedback``: the judge refitted from reviewed runs' recorded signals."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.loop.calibrate import ANSWER_RATES
from evidence_loop.agent.service import Service
from evidence_loop.agent.tuning.feedback_fit import MIN_PER_KIND, label_of
from evidence_loop.agent.tuning.feedback_reviews import reviews
from evidence_loop.policies.config import Policy, load_policy_file
from evidence_loop.traces.feedback.feedback import FeedbackEntry, Verdict
from evidence_loop.traces.records.schema import utc_timestamp
from tests.fake_embedder import FakeEmbedder

ANSWERABLE = [
    "LM-S10 整机保修多久？",
    "How do I reschedule a class?",
    "What is the refund policy for tablets?",
    "How long does the device warranty last?",
    "设备无法连接Wi-Fi怎么办？",
    "How many days do I have to return a device?",
    "配送需要几天？",
    "What does the Lumen Care Premium plan cover?",
    "尊享会员有哪些服务？",
    "How do I contact support?",
    "账号怎么注销？",
    "在读学员可以改期几次？",
    "What does the Lumen Care Essential plan cost?",
    "课程开课前可以退款吗？",
    "基础会员包括什么？",
    "Can I exchange a device I bought?",
    "The device cannot connect to Wi-Fi, what should I check?",
    "退换货需要什么条件？",
]
UNANSWERABLE = [
    "How many moons does the planet Zorblax have?",
    "火星上的咖啡馆几点关门？",
    "What is the airspeed of an unladen swallow?",
    "Who won the 1987 chess olympiad in Reykjavik?",
    "量子冰箱的保修期是多久？",
    "How do I tune the carburettor of a 1962 tractor?",
    "月球基地的停车费怎么算？",
    "What is the recipe for dragon fruit kimchi?",
    "海底隧道列车的时刻表是什么？",
    "Which orchestra premiered the symphony of the whales?",
    "南极企鹅邮局的邮编是多少？",
    "How tall is the lighthouse on the island of Nowhere?",
    "What colour is the flag of Atlantis?",
    "恐龙博物馆的门票多少钱？",
    "How do I register a pet unicorn?",
    "What is the boiling point of moon cheese?",
    "古代飞船的发动机型号是什么？",
    "Where is the nearest time machine repair shop?",
]


@pytest.fixture(scope="module")
def reviewed(
    tmp_path_factory: pytest.TempPathFactory, measured_sample: Path
) -> Iterator[tuple[Path, list[str]]]:
    """An index whose runs were all reviewed: each verdict from what the run did and what it should have."""
    index = shutil.copytree(measured_sample, tmp_path_factory.mktemp("feedback") / "index")
    service = Service.open(index, embedder=FakeEmbedder())  # the sample, ingested with FakeEmbedder()
    assert service.traces is not None
    run_ids = []
    for question, answerable in [(q, True) for q in ANSWERABLE] + [(q, False) for q in UNANSWERABLE]:
        outcome = service.ask(question)
        assert outcome.trace is not None
        right = (outcome.status == "answered") == answerable
        verdict: Verdict = (
            "correct" if right else "should_have_answered" if answerable else "should_have_refused"
        )
        now = utc_timestamp(datetime.now(UTC))
        service.traces.feedback.append(
            FeedbackEntry(outcome.run_id, outcome.trace.hash, verdict, now, "tester")
        )
        run_ids.append(outcome.run_id)
    service.close()
    yield index, run_ids


@pytest.mark.parametrize(
    ("verdict", "status", "label"),
    [
        ("correct", "answered", True),
        ("correct", "insufficient_evidence", False),
        ("correct", "conflicting_evidence", None),
        ("should_have_refused", "answered", False),
        ("should_have_answered", "insufficient_evidence", True),
        ("wrong_evidence", "answered", False),
        ("missed_conflict", "answered", None),
        ("false_conflict", "conflicting_evidence", None),
    ],
)
def test_a_verdict_labels_the_run_it_judges(verdict: str, status: str, label: bool | None) -> None:
    assert label_of(verdict, status) == label


def test_every_reviewed_run_gives_its_recorded_signals_and_label(reviewed: tuple[Path, list[str]]) -> None:
    index, run_ids = reviewed
    with Service.open(index, embedder=FakeEmbedder()) as service:
        assert service.traces is not None
        found = reviews(service.traces)
    runs = found.runs

    assert [r.run_id for r in runs] == run_ids and not found.left_out
    assert [r.answerable for r in runs] == [True] * len(ANSWERABLE) + [False] * len(UNANSWERABLE)


def test_too_few_reviews_are_refused_with_how_many_more_are_needed(
    reviewed: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    index, _ = reviewed
    code = main(["calibrate", "--feedback", "--index", str(index), "--since", "2999-01-01"])

    assert code == 2
    err = capsys.readouterr().err
    assert f"review {MIN_PER_KIND} more of the first kind and {MIN_PER_KIND} more of the second" in err


def test_the_fit_is_reported_against_the_current_policy_and_written_only_with_out(
    reviewed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index, _ = reviewed
    out = tmp_path / "policy.json"

    assert main(["calibrate", "--feedback", "--index", str(index), "--answer-rate", "0.9"]) == 0
    printed = capsys.readouterr().out
    assert not out.exists() and "no policy written" in printed
    assert (
        main(["calibrate", "--feedback", "--index", str(index), "--answer-rate", "0.9", "--out", str(out)])
        == 0
    )

    printed = capsys.readouterr().out
    reviews = len(ANSWERABLE) + len(UNANSWERABLE)
    assert row(printed, "current (as the runs went)")[0] == row(printed, "fitted at rate 0.9 (chosen)")[0]
    assert row(printed, "current (as the runs went)")[0] == str(reviews)
    assert "took the fit at rate 0.9, as --answer-rate says" in printed
    policy = load_policy_file(out)
    assert policy.answer_rate == 0.9 and policy.judge is not None
    assert policy.judge.fitted_on == ("feedback",) and policy.digest() != Policy().digest()
    assert json.loads(out.read_text())["report"]["feedback"]["cross_validated"]["reviews"] == reviews


def row(printed: str, name: str) -> list[str]:
    """The figures of the curve's line named ``name``: reviews, then answer [interval], refusal
    [interval], correct, and for a fitted point its gain and the gain's lower bound."""
    (line,) = [line for line in printed.splitlines() if line.startswith(name + "  ")]
    return line[len(name) :].split()


def test_a_served_fitted_policy_is_pinned_in_every_later_trace(
    reviewed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    index, _ = reviewed
    out = tmp_path / "policy.json"
    command = ["calibrate", "--feedback", "--index", str(index), "--answer-rate", "0.93", "--out", str(out)]
    assert main(command) == 0
    policy = load_policy_file(out)

    with Service.open(index, embedder=FakeEmbedder(), policy=policy, traces=tmp_path / "t") as service:
        outcome = service.ask(ANSWERABLE[0])
        assert service.trace(outcome.run_id).header.policy_hash == policy.digest()


def test_feedback_list_shows_the_standing_verdict_of_each_run(
    reviewed: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    index, run_ids = reviewed
    assert main(["feedback", "list", "--index", str(index)]) == 0
    lines = capsys.readouterr().out.splitlines()

    assert [line.split()[1] for line in lines[:-2]] == run_ids
    assert lines[-2] == f"{len(run_ids)} runs reviewed ({len(run_ids)} verdicts posted)"
    count = len(run_ids)
    assert (
        lines[-1]
        == f"the feedback chain verifies over {count} records; its tail is anchored at record {count}"
    )


def test_feedback_export_refuses_a_log_whose_chain_is_broken(
    reviewed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index, run_ids = reviewed
    assert main(["feedback", "export", "--index", str(index)]) == 0
    exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["run_id"] for r in exported] == run_ids and exported[1]["prev"] == exported[0]["hash"]

    copy = tmp_path / "traces"
    journal = next((index / "traces" / "feedback").glob("*.journal"))
    (copy / "feedback").mkdir(parents=True)
    lines = journal.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"tester"', '"someone else"')
    (copy / "feedback" / journal.name).write_text("\n".join(lines) + "\n", encoding="utf-8")

    assert main(["feedback", "export", "--traces", str(copy)]) == 2
    assert "record 2 was changed after it was written" in capsys.readouterr().err


def test_without_a_rate_the_current_policy_is_kept_when_no_fit_gains_more_than_chance(
    reviewed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index, _ = reviewed
    out = tmp_path / "policy.json"
    assert main(["calibrate", "--feedback", "--index", str(index), "--out", str(out)]) == 0

    printed = capsys.readouterr().out
    fitted = [row(printed, f"fitted at rate {rate:g}") for rate in ANSWER_RATES]
    assert all(float(figures[-1]) <= 0 for figures in fitted)  # no gain's lower bound above zero
    assert "kept the current policy: no fitted point decides more reviewed runs right" in printed
    assert "(chosen)" not in printed and not out.exists()


def test_the_curve_shows_each_rates_interval_and_gain(
    reviewed: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    index, _ = reviewed
    assert main(["calibrate", "--feedback", "--index", str(index)]) == 0

    printed = capsys.readouterr().out
    current = float(row(printed, "current (as the runs went)")[5])
    for rate in ANSWER_RATES:
        _, answer, answer_in, refusal, refusal_in, correct, gain, _ = row(printed, f"fitted at rate {rate:g}")
        for share, interval in ((answer, answer_in), (refusal, refusal_in)):
            low, high = (float(x) for x in interval.strip("[]").split("-"))
            assert low <= float(share) <= high
        assert float(gain) == pytest.approx(float(correct) - current, abs=0.002)


def copied(index: Path, tmp_path: Path) -> Path:
    """A copy of the reviewed index to tamper with (the module's index stays whole)."""
    shutil.copytree(index, tmp_path / "index")
    return tmp_path / "index"


def journal_of(index: Path) -> Path:
    return next((index / "traces" / "feedback").glob("*.journal"))


def test_calibrate_refuses_a_log_whose_verdicts_were_edited_without_resealing(
    reviewed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = copied(reviewed[0], tmp_path)
    journal = journal_of(index)
    lines = journal.read_text(encoding="utf-8").splitlines()
    flipped = [line.replace('"should_have_answered"', '"correct"') for line in lines]
    journal.write_text("\n".join(flipped) + "\n", encoding="utf-8")
    out = tmp_path / "policy.json"

    assert main(["calibrate", "--feedback", "--index", str(index), "--out", str(out)]) == 2

    err = capsys.readouterr().err
    assert "the feedback log does not verify: record" in err and "was changed after it was written" in err
    assert not out.exists()


def test_calibrate_refuses_a_log_whose_last_record_was_dropped(
    reviewed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = copied(reviewed[0], tmp_path)
    journal = journal_of(index)
    journal.write_text("".join(journal.read_text(encoding="utf-8").splitlines(True)[:-1]), encoding="utf-8")
    count = len(ANSWERABLE) + len(UNANSWERABLE)

    assert main(["calibrate", "--feedback", "--index", str(index)]) == 2

    assert f"record {count}, the last one the log's tail anchor names, is gone" in capsys.readouterr().err


def test_feedback_list_fails_on_a_log_whose_last_record_was_dropped(
    reviewed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = copied(reviewed[0], tmp_path)
    journal = journal_of(index)
    journal.write_text("".join(journal.read_text(encoding="utf-8").splitlines(True)[:-1]), encoding="utf-8")

    assert main(["feedback", "list", "--index", str(index)]) == 2

    assert "the feedback log does not verify: record" in capsys.readouterr().err


def test_a_run_whose_trace_fails_verification_is_left_out_and_counted(
    reviewed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evidence_loop.traces import TraceStore
    from tests.trace_support import edit_run

    index = copied(reviewed[0], tmp_path)
    store = TraceStore(index / "traces")
    edit_run(store, reviewed[1][0], lambda rs: [rs[0], rs[1].replace(b'"seq":0', b'"seq":9'), *rs[2:]])
    store.close()

    assert main(["calibrate", "--feedback", "--index", str(index), "--answer-rate", "0.9"]) == 0

    usable = len(ANSWERABLE) + len(UNANSWERABLE) - 1
    printed = capsys.readouterr().out
    assert f"{usable} reviewed runs usable (left out: 1 whose trace fails verification)" in printed


def test_when_a_second_reviewer_reverses_every_verdict_calibrate_says_so_and_fits_nothing(
    reviewed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = copied(reviewed[0], tmp_path)
    with Service.open(index, embedder=FakeEmbedder()) as service:
        assert service.traces is not None
        for record in service.traces.feedback.records():
            trace = service.trace(record.run_id)
            answered = trace.footer is not None and trace.footer.outcome_status == "answered"
            said = label_of(record.verdict, "answered" if answered else "insufficient_evidence")
            verdict: Verdict = "should_have_refused" if said else "should_have_answered"
            now = utc_timestamp(datetime.now(UTC))
            second = FeedbackEntry(record.run_id, record.run_hash, verdict, now, "second")
            service.traces.feedback.append(second)
    count = len(ANSWERABLE) + len(UNANSWERABLE)

    assert main(["calibrate", "--feedback", "--index", str(index)]) == 2

    printed = capsys.readouterr()
    assert f"0 reviewed runs usable (left out: {count} whose reviewers disagree)" in printed.out
    assert f"reviewers disagree on {count} runs" in printed.out and "correct" not in printed.out
    assert "too few reviews to fit" in printed.err


def test_a_reviewer_who_changes_their_own_verdict_is_no_disagreement(
    reviewed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    index = copied(reviewed[0], tmp_path)
    with Service.open(index, embedder=FakeEmbedder()) as service:
        assert service.traces is not None
        first = service.traces.feedback.records()[0]
        now = utc_timestamp(datetime.now(UTC))
        service.traces.feedback.append(
            FeedbackEntry(first.run_id, first.run_hash, "should_have_refused", now, first.reviewer)
        )
        found = reviews(service.traces)

    assert not found.left_out and not next(r for r in found.runs if r.run_id == first.run_id).answerable
