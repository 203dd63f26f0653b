"""evidence-loop: grounded answers with exact citations, or explicit refusals, for support chatbots.

    from evidence_loop import DocumentInput, Service

    with Service.open(".evloop", create=True) as service:
        service.ingest([DocumentInput(doc_id="warranty", text="# Warranty\n\nOne year.\n")])
        outcome = service.ask("How long is the warranty?")

The packages below (``evidence_loop.agent``, ``.tools``, ``.policies``, ``.traces``) are the
design's layers; these names are the library's front door.
"""

import warnings

from evidence_loop.agent.outcome import (
    Answer,
    Citation,
    Conflict,
    ConflictSide,
    DocumentEvidence,
    Evidence,
    GrowthStep,
    Missing,
    NotTraced,
    Outcome,
    SeedHit,
    Signals,
    Suspicious,
    TraceRef,
)
from evidence_loop.agent.replay import ReplayReport
from evidence_loop.agent.service import Service
from evidence_loop.agent.write_access import Writer
from evidence_loop.policies.config import Policy, load_policy_file
from evidence_loop.policies.types import MissingKind
from evidence_loop.tools.errors import (
    CitedVersionReplacedError,
    DeadlineExceeded,
    DiskError,
    DocIdNotWritableError,
    EmbedderError,
    EmbedderUnavailableError,
    EvidenceLoopError,
    IndexStateError,
    InputError,
    LLMError,
    NotFoundError,
    PolicyError,
    RerankerError,
    RerankerUnavailableError,
    StoreStateError,
    StoreUnavailableError,
    TamperedTraceError,
    TraceError,
    TraceStoreUnavailableError,
    WriteRefusedError,
)
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.models.llm_config import ConflictLLMConfig
from evidence_loop.tools.models.reranker_config import RerankConfig
from evidence_loop.tools.store.folder import DocumentInfo, IngestReport
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces import Trace, VerifyResult

__all__ = [
    "Answer",
    "Citation",
    "CitedVersionReplacedError",
    "Conflict",
    "ConflictLLMConfig",
    "ConflictSide",
    "DeadlineExceeded",
    "DiskError",
    "DocIdNotWritableError",
    "DocumentEvidence",
    "DocumentInfo",
    "DocumentInput",
    "EmbedConfig",
    "EmbedderError",
    "EmbedderUnavailableError",
    "Evidence",
    "EvidenceLoopError",
    "GrowthStep",
    "IndexStateError",
    "IngestReport",
    "InputError",
    "LLMError",
    "Missing",
    "MissingKind",
    "NotFoundError",
    "NotTraced",
    "Outcome",
    "Policy",
    "PolicyError",
    "ReplayReport",
    "RerankConfig",
    "RerankerError",
    "RerankerUnavailableError",
    "SeedHit",
    "Service",
    "Signals",
    "StoreStateError",
    "StoreUnavailableError",
    "Suspicious",
    "TamperedTraceError",
    "Trace",
    "TraceError",
    "TraceRef",
    "TraceStoreUnavailableError",
    "VerifyResult",
    "WriteRefusedError",
    "Writer",
    "load_policy_file",
]


def __getattr__(name: str) -> object:
    """Names renamed in 0.2.0, kept through 0.2.x with a DeprecationWarning (docs/versioning.md)."""
    if name == "LLMConfig":  # deprecated alias
        message = f"{__name__}.{name} is renamed ConflictLLMConfig; the old name goes in 0.3.0"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return ConflictLLMConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
