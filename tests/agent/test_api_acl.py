"""Access control through the HTTP layer: a matrix of keys, documents and questions.

For every key, nothing it can see (the outcome's answer, evidence, missing pieces and conflicts,
and every trace it may read) contains a sentence, a title or a doc_id of a document its groups
cannot read. Recall filters by ACL, so restricted units never enter sliding, parent expansion or
wider retrieval; these tests check the consequence end to end, refusals and traces included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.access.keys import Caller
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput
from tests.agent.api_support import Key, api_client, open_sample

EXTRA = (
    DocumentInput(
        "sales-playbook-en",
        "# Sales playbook\n\n## School discounts\n\nSales reps may offer the LM-X200 at 18% off to schools "
        "ordering more than 40 units. Quote the internal code SALES-EDU-7731 on the order form.\n",
        title="Sales playbook",
        format="markdown",
        acl=("sales",),
    ),
    DocumentInput(
        "exec-comp-zh",
        "# 高管薪酬方案\n\n## 年终奖\n\n"
        "高管年终奖为年薪的4个月，须在次年2月28日前发放完毕。绩效评级为C的高管不发放年终奖。\n",
        title="高管薪酬方案",
        format="markdown",
        acl=("exec",),
    ),
    DocumentInput(
        "partner-rebates-zh",
        "# 渠道合作伙伴返点\n\n合作伙伴季度采购满50台学习设备返点6%，返点以代金券形式在下季度首月发放。\n",
        title="渠道合作伙伴返点",
        format="markdown",
        acl=("staff", "sales"),
    ),
    DocumentInput(
        "member-prices-zh",
        "# 会员折扣\n\n## 会员价\n\n"
        "普通会员购买学习设备享受95折。员工的购机优惠请参见员工内部购机优惠规则。\n",
        title="会员折扣",
        format="markdown",
    ),
)
QUESTIONS = (
    "员工购买学习设备打几折？",
    "员工购机优惠码是什么？",
    "学校批量采购LM-X200有折扣吗？",
    "What discount can sales reps offer schools on the LM-X200?",
    "高管年终奖是年薪的几个月？",
    "合作伙伴采购满50台返点多少？",
    "会员购买学习设备有什么折扣？员工呢？",
    "LM-S10 整机保修多久？",
)
ASKERS = (
    Key("nobody", "mk-nobody", (), ("ask",)),
    Key("staff", "mk-staff", ("staff",), ("ask",)),
    Key("sales", "mk-sales", ("sales",), ("ask",)),
    Key("staff-sales", "mk-staff-sales", ("staff", "sales"), ("ask",)),
    Key("exec", "mk-exec", ("exec",), ("ask",)),
)
AUDITORS = (
    Key("audit-nobody", "mk-audit", (), ("audit",)),
    Key("audit-staff", "mk-audit-staff", ("staff",), ("audit",)),
    Key("audit-all", "mk-audit-all", ("staff", "sales", "exec"), ("audit",)),
)
# A short heading ("年终奖") may be a word of the question itself; longer texts cannot.
MIN_SNIPPET = 10


@dataclass(frozen=True, slots=True)
class Run:
    key: Key
    question: str
    outcome: dict[str, Any]
    run_id: str


def caller(key: Key) -> Caller:
    return Caller(key.name, frozenset(key.groups), frozenset(key.scopes))


def secrets_for(key: Key) -> set[str]:
    """Sentences, titles and doc_ids of the documents ``key`` may not read, absent from those it may."""
    docs = [*load_sample_kb(), *EXTRA]
    readable_text = "\n".join(d.text + d.title + d.doc_id for d in docs if caller(key).may_read(d.acl))
    readable_text += "\n".join(QUESTIONS)
    hidden: set[str] = set()
    for doc in (d for d in docs if not caller(key).may_read(d.acl)):
        units = [u.text.strip() for u in parse_document(doc).units]
        hidden.update(t for t in (*units, doc.title, doc.doc_id) if len(t) >= MIN_SNIPPET or t == doc.doc_id)
    return {s for s in hidden if s not in readable_text}


def leaks(seen: object, key: Key) -> list[str]:
    text = json.dumps(seen, ensure_ascii=False)
    return sorted(s for s in secrets_for(key) if s in text or json.dumps(s, ensure_ascii=False)[1:-1] in text)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, list[Run]]]:
    service = open_sample(tmp_path_factory.mktemp("acl"), EXTRA)
    client = api_client(service, keys_for=(*ASKERS, *AUDITORS))
    runs = []
    for key in ASKERS:
        for question in QUESTIONS:
            response = client.post("/v1/ask", json={"question": question}, headers=key.headers)
            assert response.status_code == 200, response.text
            runs.append(Run(key, question, response.json(), response.json()["run_id"]))
    yield client, runs
    service.close()


def cited_docs(run: Run) -> set[str]:
    return {str(e["doc_id"]) for e in run.outcome["evidence"]}


def test_every_restricted_document_has_text_to_leak() -> None:
    assert all(secrets_for(Key("k", "s", (), ())) & {d.doc_id} for d in EXTRA if d.acl)


@pytest.mark.parametrize("key", ASKERS, ids=lambda k: k.name)
def test_no_outcome_shows_a_key_text_it_cannot_read(served: tuple[TestClient, list[Run]], key: Key) -> None:
    _, runs = served

    assert {r.question: leaks(r.outcome, key) for r in runs if r.key == key} == {q: [] for q in QUESTIONS}


@pytest.mark.parametrize("key", ASKERS, ids=lambda k: k.name)
def test_no_trace_of_its_own_shows_a_key_text_it_cannot_read(
    served: tuple[TestClient, list[Run]], key: Key
) -> None:
    client, runs = served
    traces = {
        r.question: client.get(f"/v1/traces/{r.run_id}", headers=key.headers) for r in runs if r.key == key
    }

    assert {q: (t.status_code, leaks(t.json(), key)) for q, t in traces.items()} == {
        q: (200, []) for q in QUESTIONS
    }


@pytest.mark.parametrize("auditor", AUDITORS, ids=lambda k: k.name)
def test_no_trace_an_auditor_can_read_shows_it_text_it_cannot_read(
    served: tuple[TestClient, list[Run]], auditor: Key
) -> None:
    client, runs = served
    readable = [client.get(f"/v1/traces/{r.run_id}", headers=auditor.headers) for r in runs]

    assert [leaks(t.json(), auditor) for t in readable if t.status_code == 200] == [
        [] for t in readable if t.status_code == 200
    ]


@pytest.mark.parametrize("auditor", AUDITORS, ids=lambda k: k.name)
def test_an_auditor_reads_exactly_the_runs_within_its_groups(
    served: tuple[TestClient, list[Run]], auditor: Key
) -> None:
    client, runs = served

    visible = {
        r.run_id
        for r in runs
        if client.get(f"/v1/traces/{r.run_id}", headers=auditor.headers).status_code == 200
    }

    assert visible == {r.run_id for r in runs if set(r.key.groups) <= set(auditor.groups)}


@pytest.mark.parametrize(
    ("key", "question", "doc_id"),
    [
        (ASKERS[1], QUESTIONS[0], "staff-discount-zh"),
        (ASKERS[2], QUESTIONS[3], "sales-playbook-en"),
        (ASKERS[4], QUESTIONS[4], "exec-comp-zh"),
        (ASKERS[3], QUESTIONS[5], "partner-rebates-zh"),
    ],
    ids=lambda v: v.name if isinstance(v, Key) else None,
)
def test_a_key_holding_the_group_gets_the_restricted_document(
    served: tuple[TestClient, list[Run]], key: Key, question: str, doc_id: str
) -> None:
    _, runs = served
    run = next(r for r in runs if (r.key, r.question) == (key, question))

    assert doc_id in cited_docs(run)


def test_the_same_questions_without_the_group_never_cite_it(served: tuple[TestClient, list[Run]]) -> None:
    _, runs = served
    restricted = {d.doc_id: d.acl for d in [*load_sample_kb(), *EXTRA] if d.acl}

    cited = {
        (r.key.name, doc_id)
        for r in runs
        for doc_id in cited_docs(r)
        if doc_id in restricted and not caller(r.key).may_read(restricted[doc_id])
    }

    assert cited == set()


def test_the_leak_check_would_catch_a_staff_answer_shown_to_the_public(
    served: tuple[TestClient, list[Run]],
) -> None:
    _, runs = served
    staff_run = next(r for r in runs if (r.key, r.question) == (ASKERS[1], QUESTIONS[0]))

    assert leaks(staff_run.outcome, ASKERS[0]) != []
