"""Small evidence, candidates and scripted models shared by the LLM adjudicator tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from evidence_loop.agent.loop.conflict_check import Adjudication
from evidence_loop.policies.types import ConflictCandidate, EvidenceView, ValueMention
from evidence_loop.tools.models.llm_config import ConflictLLMConfig
from evidence_loop.tools.types import DocumentInput

STANDARD = EvidenceView(
    evidence_id="e1",
    doc_id="refund-policy",
    version="3",
    is_current=True,
    section=("退款", "期限"),
    start=100,
    end=114,
    text="退款须在购买后30天内申请。",
)
VIP = EvidenceView(
    evidence_id="e2",
    doc_id="vip-benefits",
    version="1",
    is_current=True,
    section=("会员权益",),
    start=40,
    end=55,
    text="VIP会员的退款期限为60天。",
)
VIEWS = (STANDARD, VIP)
QUESTION = "退款期限是多少天？"


def mention(view: EvidenceView, value: str) -> ValueMention:
    """The first place ``value`` occurs in ``view``, in document offsets."""
    at = view.start + view.text.index(value)
    return ValueMention(view.evidence_id, view.doc_id, view.version, value, value, at, at + len(value), value)


CANDIDATE = ConflictCandidate("退款期限", "duration", mention(STANDARD, "30天"), mention(VIP, "60天"))

COMPATIBLE = {
    "verdicts": [
        {
            "candidate": 0,
            "verdict": "compatible",
            "reason": "the 60 days apply to VIP members only",
            "scope": "30天: all buyers; 60天: VIP members",
            "superseded_by": None,
            "quotes": [
                {"evidence_id": "e1", "text": "购买后30天内申请"},
                {"evidence_id": "e2", "text": "VIP会员的退款期限为60天"},
            ],
        }
    ]
}


# two pages that disagree on the refund period, as a whole run asks about them
REFUND_QUESTION = "退款须在购买后多少天内申请？"
REFUND_DOCS = [
    DocumentInput("refund-a", "# 退款\n\n退款须在购买后30天内申请，逾期不予受理。\n", format="markdown"),
    DocumentInput("refund-b", "# 退款说明\n\n退款须在购买后60天内申请，逾期不予受理。\n", format="markdown"),
]


def refund_verdict(quote_a: str = "购买后30天内申请", quote_b: str = "购买后60天内申请") -> dict[str, Any]:
    """The model's verdict on the refund pages: a conflict, quoting each (evidence e1 and e2)."""
    return {
        "verdicts": [
            {
                "candidate": 0,
                "verdict": "conflict",
                "reason": "the two pages give different refund periods for the same purchase",
                "scope": None,
                "superseded_by": None,
                "quotes": [{"evidence_id": "e1", "text": quote_a}, {"evidence_id": "e2", "text": quote_b}],
            }
        ]
    }


def with_quote(verdicts: dict[str, Any], text: str) -> dict[str, Any]:
    """``verdicts`` whose first quote is ``text`` instead."""
    changed: dict[str, Any] = json.loads(json.dumps(verdicts))
    changed["verdicts"][0]["quotes"][0]["text"] = text
    return changed


def records(result: Adjudication, step: str) -> list[dict[str, Any]]:
    """The records of one step ("llm_request" or "llm_reply"), in order."""
    return [cast(dict[str, Any], r) for r in result.records if r["step"] == step]


def config(**changes: Any) -> ConflictLLMConfig:
    """A test configuration: tiny backoff, short timeouts."""
    values: dict[str, Any] = {
        "base_url": "http://127.0.0.1:9/v1",
        "model": "fake-model",
        "api_key": "sk-SECRET-123",
    }
    values |= {"timeout_s": 2.0, "backoff_base_s": 0.001, "backoff_max_s": 0.005, "deadline_s": 10.0}
    return ConflictLLMConfig(**(values | changes))


Step = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def read(*evidence_ids: str) -> Step:
    """A model turn that reads the given evidence."""
    calls = [ToolCallPart("read_evidence", {"evidence_id": e}) for e in evidence_ids]
    return lambda messages, info: ModelResponse(parts=calls)


def call(tool: str, args: dict[str, Any]) -> Step:
    """A model turn calling one tool."""
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


def answer(verdicts: dict[str, Any]) -> Step:
    """A model turn giving the final verdicts through the output tool."""
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, verdicts)])


@dataclass
class Script:
    """A FunctionModel that plays ``steps`` in order and keeps what it was shown."""

    steps: Sequence[Step]
    seen: list[list[ModelMessage]] = field(default_factory=list)
    infos: list[AgentInfo] = field(default_factory=list)

    def model(self) -> FunctionModel:
        return FunctionModel(self._turn, model_name="script")

    def _turn(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        self.infos.append(info)
        if len(self.seen) > len(self.steps):
            raise AssertionError(f"the script has {len(self.steps)} turns; turn {len(self.seen)} was asked")
        return self.steps[len(self.seen) - 1](messages, info)
