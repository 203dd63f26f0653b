"""evidence-loop: grounded answers with exact citations, or explicit refusals, for support chatbots.

    from evidence_loop import DocumentInput, Service

    with Service.open(".evloop", create=True) as service:
        service.ingest([DocumentInput(doc_id="warranty", text="# Warranty\n\nOne year.\n")])
        outcome = service.ask("How long is the warranty?")

The packages below (``evidence_loop.agent``, ``.tools``, ``.policies``, ``.traces``) are the
design's layers; these names are the library's front door.
"""

from evidence_loop.agent.outcome import (
    Answer,
    Citation,
    Conflict,
    ConflictSide,
    Evidence,
    Missing,
    NotTraced,
    Outcome,
    Signals,
    TraceRef,
)
from evidence_loop.agent.replay import ReplayReport
from evidence_loop.agent.service import Service
from evidence_loop.agent.write_access import Writer
from evidence_loop.policies.config import Policy, load_policy_file
from evidence_loop.tools.embed_config import EmbedConfig
from evidence_loop.tools.errors import (
    CitedVersionReplacedError,
    DeadlineExceeded,
    DiskError,
    DocIdNotWritableError,
    EmbedderError,
    EvidenceLoopError,
    IndexStateError,
    InputError,
    LLMError,
    NotFoundError,
    RerankerError,
    StoreStateError,
    StoreUnavailableError,
    TamperedTraceError,
    TraceError,
    TraceStoreUnavailableError,
    WriteRefusedError,
)
from evidence_loop.tools.llm_config import LLMConfig
from evidence_loop.tools.rerank_config import RerankConfig
from evidence_loop.tools.types import DocumentInput

__all__ = [
    "Answer",
    "Citation",
    "CitedVersionReplacedError",
    "Conflict",
    "ConflictSide",
    "DeadlineExceeded",
    "DiskError",
    "DocIdNotWritableError",
    "DocumentInput",
    "EmbedConfig",
    "EmbedderError",
    "Evidence",
    "EvidenceLoopError",
    "IndexStateError",
    "InputError",
    "LLMConfig",
    "LLMError",
    "Missing",
    "NotFoundError",
    "NotTraced",
    "Outcome",
    "Policy",
    "ReplayReport",
    "RerankConfig",
    "RerankerError",
    "Service",
    "Signals",
    "StoreStateError",
    "StoreUnavailableError",
    "TamperedTraceError",
    "TraceError",
    "TraceRef",
    "TraceStoreUnavailableError",
    "WriteRefusedError",
    "Writer",
    "load_policy_file",
]
