"""Every exception evidence-loop raises on purpose, in one tree.

    EvidenceLoopError                 base: anything the user can act on
    ├── InputError                    bad input; nothing was written
    │   ├── MalformedRecordError      a corpus.jsonl / questions.jsonl line is not valid (file, line)
    │   ├── UnsupportedFormatError    a file type or document format we do not parse
    │   ├── DecodeError               bytes that are not UTF-8
    │   ├── DocumentTooLargeError     over the configured size limit
    │   ├── QuestionTooLongError      a question over the configured length limit
    │   ├── VersionClashError         same doc_id and version, different text, without --replace
    │   └── PolicyError               a policy field or policy file that cannot be used (names which)
    ├── NotFoundError                 an unknown document, version, run id or trace
    ├── IndexStateError               the index folder is missing, corrupt or from another schema
    │   └── StoreStateError           the shared store (PostgreSQL) is not migrated, or refused a statement
    │       └── StoreUnavailableError the shared store cannot be reached right now
    ├── TraceError                    a trace that cannot be read or does not verify
    │   └── TamperedTraceError        a trace whose chain or recorded end does not hold (not replayed)
    ├── DeadlineExceeded              a run out of time, stopped at a step boundary
    ├── LLMError                      the conflict adjudicator's model failed after retries
    ├── EmbedderError                 the embedder failed, or disagrees with the index's vectors
    │   └── EmbedderUnavailableError  its endpoint cannot be reached (refused, timed out) after retries
    └── RerankerError                 the rerank endpoint failed after retries, or gave an unreadable reply
        └── RerankerUnavailableError  the rerank endpoint cannot be reached (refused, timed out)

"Insufficient evidence" and "conflicting evidence" are outcomes, never exceptions.
"""

from __future__ import annotations


class EvidenceLoopError(Exception):
    """Base of every error evidence-loop raises on purpose."""


class InputError(EvidenceLoopError):
    """Bad input; nothing was written."""


class MalformedRecordError(InputError):
    """A JSON Lines record that cannot be used; names the file and the line."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class UnsupportedFormatError(InputError):
    """A file type or document format that evidence-loop does not parse."""


class DecodeError(InputError):
    """Bytes that are not valid UTF-8."""


class DocumentTooLargeError(InputError):
    """A document over the configured size limit."""


class QuestionTooLongError(InputError):
    """A question over the configured length limit."""


class VersionClashError(InputError):
    """The same doc_id and version with different text, without replace."""


class PolicyError(InputError, ValueError):
    """A policy that cannot be used: ``field`` names the field (None: the file as a whole),
    ``path`` the policy file it came from (None: an override given as text). Also a ValueError, which
    ``load_policy_file`` raised before."""

    def __init__(self, message: str, *, field: str | None = None, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.field = field
        self.path = path


class NotFoundError(EvidenceLoopError):
    """An unknown document, version, run id or trace."""


class IndexStateError(EvidenceLoopError):
    """The index folder is missing, corrupt, or written by another schema version."""


class StoreStateError(IndexStateError):
    """The shared store (PostgreSQL) is not migrated, is ahead of this code, or refused a statement:
    its repair is a database's (``evloop migrate``), not a folder's."""


class StoreUnavailableError(StoreStateError):
    """The shared store (PostgreSQL) cannot be reached; the same call may succeed once it is back."""


class TraceError(EvidenceLoopError):
    """A trace that cannot be read, or whose hash chain does not verify."""


class TamperedTraceError(TraceError):
    """A trace that fails verification, so it is not replayed: ``seq`` is where it first fails."""

    def __init__(self, run_id: str, seq: int, reason: str) -> None:
        where = "the header" if seq < 0 else f"event {seq}"
        super().__init__(f"run {run_id}: tampered at {where}: {reason}; not replayed")
        self.run_id = run_id
        self.seq = seq
        self.reason = reason


class DeadlineExceeded(EvidenceLoopError):
    """A run stopped at a step boundary because its time was up; its trace ends with ``aborted``."""


class LLMError(EvidenceLoopError):
    """The conflict adjudicator's model failed after its retries."""


class EmbedderError(EvidenceLoopError):
    """The embedder failed after its retries, or is not the one the index's vectors were made with."""


class EmbedderUnavailableError(EmbedderError):
    """The embeddings endpoint cannot be reached (connection refused or lost, timed out) after retries."""


class RerankerError(EvidenceLoopError):
    """The rerank endpoint failed after its retries, refused the request, or gave an unreadable reply."""


class RerankerUnavailableError(RerankerError):
    """The rerank endpoint cannot be reached (connection refused or lost, timed out) after retries."""
