"""evidence-loop: grounded answers with exact citations, or explicit refusals, for support chatbots.

    from evidence_loop import DocumentInput, Service

    with Service.open(".evloop", create=True) as service:
        service.ingest([DocumentInput(doc_id="warranty", text="# Warranty\n\nOne year.\n")])
        outcome = service.ask("How long is the warranty?")

The packages below (``evidence_loop.agent``, ``.tools``, ``.policies``, ``.traces``) are the
design's layers; these names are the library's front door.
"""

import importlib
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evidence_loop.agent.access.write_access import Writer
    from evidence_loop.agent.loop.replay import ReplayReport
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
    from evidence_loop.agent.service import Service
    from evidence_loop.policies.config import Policy, load_policy_file
    from evidence_loop.policies.types import MissingKind, Status
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
        QuestionTooLongError,
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

# Each front-door name and the module it lives in, imported when the name is first read: `import
# evidence_loop` (and the CLI, which lives inside it) costs nothing until a name is used.
_FRONT_DOOR: dict[str, str] = {
    "Answer": "evidence_loop.agent.outcome",
    "Citation": "evidence_loop.agent.outcome",
    "Conflict": "evidence_loop.agent.outcome",
    "ConflictSide": "evidence_loop.agent.outcome",
    "DocumentEvidence": "evidence_loop.agent.outcome",
    "Evidence": "evidence_loop.agent.outcome",
    "GrowthStep": "evidence_loop.agent.outcome",
    "Missing": "evidence_loop.agent.outcome",
    "NotTraced": "evidence_loop.agent.outcome",
    "Outcome": "evidence_loop.agent.outcome",
    "SeedHit": "evidence_loop.agent.outcome",
    "Signals": "evidence_loop.agent.outcome",
    "Suspicious": "evidence_loop.agent.outcome",
    "TraceRef": "evidence_loop.agent.outcome",
    "ReplayReport": "evidence_loop.agent.loop.replay",
    "Service": "evidence_loop.agent.service",
    "Writer": "evidence_loop.agent.access.write_access",
    "Policy": "evidence_loop.policies.config",
    "load_policy_file": "evidence_loop.policies.config",
    "MissingKind": "evidence_loop.policies.types",
    "Status": "evidence_loop.policies.types",
    "CitedVersionReplacedError": "evidence_loop.tools.errors",
    "DeadlineExceeded": "evidence_loop.tools.errors",
    "DiskError": "evidence_loop.tools.errors",
    "DocIdNotWritableError": "evidence_loop.tools.errors",
    "EmbedderError": "evidence_loop.tools.errors",
    "EmbedderUnavailableError": "evidence_loop.tools.errors",
    "EvidenceLoopError": "evidence_loop.tools.errors",
    "IndexStateError": "evidence_loop.tools.errors",
    "InputError": "evidence_loop.tools.errors",
    "LLMError": "evidence_loop.tools.errors",
    "NotFoundError": "evidence_loop.tools.errors",
    "PolicyError": "evidence_loop.tools.errors",
    "QuestionTooLongError": "evidence_loop.tools.errors",
    "RerankerError": "evidence_loop.tools.errors",
    "RerankerUnavailableError": "evidence_loop.tools.errors",
    "StoreStateError": "evidence_loop.tools.errors",
    "StoreUnavailableError": "evidence_loop.tools.errors",
    "TamperedTraceError": "evidence_loop.tools.errors",
    "TraceError": "evidence_loop.tools.errors",
    "TraceStoreUnavailableError": "evidence_loop.tools.errors",
    "WriteRefusedError": "evidence_loop.tools.errors",
    "EmbedConfig": "evidence_loop.tools.models.embedder_config",
    "ConflictLLMConfig": "evidence_loop.tools.models.llm_config",
    "RerankConfig": "evidence_loop.tools.models.reranker_config",
    "DocumentInfo": "evidence_loop.tools.store.folder",
    "IngestReport": "evidence_loop.tools.store.folder",
    "DocumentInput": "evidence_loop.tools.types",
    "Trace": "evidence_loop.traces",
    "VerifyResult": "evidence_loop.traces",
}

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
    "QuestionTooLongError",
    "ReplayReport",
    "RerankConfig",
    "RerankerError",
    "RerankerUnavailableError",
    "SeedHit",
    "Service",
    "Signals",
    "Status",
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
    """A front-door name, imported from its module when first read (then kept in this module); and
    the names renamed in 0.2.0, kept through 0.2.x with a DeprecationWarning (docs/versioning.md)."""
    if (module := _FRONT_DOOR.get(name)) is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name == "LLMConfig":  # deprecated alias
        message = f"{__name__}.{name} is renamed ConflictLLMConfig; the old name goes in 0.3.0"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return __getattr__("ConflictLLMConfig")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
