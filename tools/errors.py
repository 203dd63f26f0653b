"""Every exception evidence-loop raises on purpose, in one tree.

    EvidenceLoopError                 base: anything the user can act on
    ├── InputError                    bad input; nothing was written
    │   ├── MalformedRecordError      a corpus.jsonl / questions.jsonl line is not valid (file, line)
    │   ├── UnsupportedFormatError    a file type or document format we do not parse
    │   ├── DecodeError               bytes that are not UTF-8
    │   ├── JsonInputError            JSON that is not, nests too deeply, or holds a lone surrogate
    │   ├── DocumentTooLargeError     over the configured size limit
    │   ├── QuestionTooLongError      a question over the configured length limit
    │   ├── VersionClashError         a version label given again with different text, without --replace
    │   └── PolicyError               a policy field or policy file that cannot be used (names which)
    ├── NotFoundError                 an unknown document, version, run id or trace
    ├── WriteRefusedError             a write the caller's groups or scopes do not allow; nothing written
    │   └── DocIdNotWritableError     a doc_id the caller may not create, or held by a document it cannot read
    ├── IndexStateError               the index folder is missing, corrupt or from another schema
    │   └── StoreStateError           the shared store (PostgreSQL) is not migrated, or refused a statement
    │       └── StoreUnavailableError the shared store cannot be reached right now
    ├── DiskError                     the disk under a folder is full or failing; nothing stored was lost
    ├── TraceError                    a trace that cannot be read or does not verify
    │   ├── TamperedTraceError        a trace whose chain or recorded end does not hold (not replayed)
    │   ├── UnwrittenTraceError       a trace file without a complete header: the run was never recorded
    │   ├── CitedVersionReplacedError a version the trace cites was rewritten by a later write (not replayed)
    │   └── TraceStoreUnavailableError a run's trace cannot be written: no answer without its audit record
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


class JsonInputError(InputError):
    """JSON that cannot be taken (``tools.inputs.parse_json``): not JSON (``not_json``), nested too
    deeply, or holding a lone surrogate. Its text is the reason alone; the caller adds where (a file
    and line, a field)."""

    def __init__(self, reason: str, *, not_json: bool = False) -> None:
        super().__init__(reason)
        self.not_json = not_json


class DocumentTooLargeError(InputError):
    """A document over the configured size limit."""


class QuestionTooLongError(InputError):
    """A question over the configured length limit."""


class VersionClashError(InputError):
    """A version label given again with different text than it names, without replace."""


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


class WriteRefusedError(EvidenceLoopError):
    """A write (create, replace, update, delete) that the caller's groups or scopes do not allow;
    nothing of its batch was written. Its message never shows a document's text. ``rule`` names the
    rule that refused it, ``allowed_by`` the key that would be allowed (agent/access/write_access.py)."""

    def __init__(self, message: str, *, rule: str = "", allowed_by: str = "") -> None:
        super().__init__(message)
        self.rule = rule
        self.allowed_by = allowed_by


class DocIdNotWritableError(WriteRefusedError):
    """A doc_id the caller may not create, or one held by a document it cannot read: the same
    refusal for both, so that it does not tell whether a hidden document holds the doc_id."""


class IndexStateError(EvidenceLoopError):
    """The index folder is missing, corrupt, or written by another schema version."""


class StoreStateError(IndexStateError):
    """The shared store (PostgreSQL) is not migrated, is ahead of this code, or refused a statement:
    its repair is a database's (``evloop migrate``), not a folder's."""


class StoreUnavailableError(StoreStateError):
    """The shared store (PostgreSQL) cannot be reached; the same call may succeed once it is back."""


class DiskError(EvidenceLoopError):
    """No space left on the disk under ``folder`` (``full``), or an I/O error there.

    Not damage: what is stored stays as it was, and the same command succeeds once there is room
    again (or the disk answers again). Never a reason to delete and rebuild anything.
    """

    def __init__(self, folder: str, *, full: bool, doing: str, cause: str = "") -> None:
        what = f"no space left on the disk at {folder}" if full else f"an I/O error at {folder}"
        because = f" ({cause})" if cause else ""
        remedy = "free space there and retry" if full else "check the disk (e.g. dmesg) and retry"
        super().__init__(f"{what}{because} while {doing}; {remedy}; nothing stored was lost")
        self.folder = folder
        self.full = full
        self.doing = doing


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


class UnwrittenTraceError(TraceError):
    """A trace file with no complete header line: its run was never recorded (the disk was full, or
    the process was killed as the run began). Nothing was written that could have been changed."""


class CitedVersionReplacedError(TraceError):
    """A trace whose chain holds but which cites a version whose text a later write replaced
    (``--replace``, ``?replace=true``): not tampering, but the run cannot be replayed as it ran."""

    def __init__(self, run_id: str, replaced: tuple[tuple[str, str], ...]) -> None:
        names = ", ".join(f"{doc_id}@{version}" for doc_id, version in replaced)
        super().__init__(
            f"run {run_id}: cited version replaced: {names} (rewritten by a later write; the text "
            "this run read is no longer stored); not replayed (`--current` replays against today's text)"
        )
        self.run_id = run_id
        self.replaced = replaced


class TraceStoreUnavailableError(TraceError):
    """A run's trace could not be written (a full disk, an I/O error, an unreachable database).

    The run gives no answer without its audit record (fail closed), unless the operator chose to
    answer untraced. ``where`` names the trace file or store; ``disk`` is the disk error behind it.
    """

    def __init__(self, where: str, reason: str, *, disk: DiskError | None = None) -> None:
        super().__init__(
            f"the trace of this run could not be written at {where}: {reason}; no answer is given "
            "without its audit record"
        )
        self.where = where
        self.reason = reason
        self.disk = disk


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
