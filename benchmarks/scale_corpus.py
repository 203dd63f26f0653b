"""Help-centre-like corpora of any size, made from real articles repeated and perturbed.

    build(target_units, sources, seed)   documents whose units add up to ``target_units`` or a little more

The templates are the articles of ``benchmarks/helpcentre/kb`` (committed, bilingual, HTML, Markdown
and text) and the documents of any evaluation sets named (read where they lie, never copied). Every
template appears once as it is (so the help centre's questions keep their answers), then again and
again as a *copy*, template after template, each copy perturbed by its own seeded random draw:

- a product code (``C200``, ``LM-S10``) gets the copy's suffix (``C200X17``): a help centre holds
  the same article for many products, and each product adds words to the vocabulary;
- a number changes (``15`` -> ``19``), as the same policy differs by region or product;
- one word in eight (an English word of four letters or more, or two Chinese characters) is swapped
  for another word of the same kind drawn from all the templates, as often as they use it, so no
  two copies score alike and the vocabulary keeps the templates' frequencies.

Markup (HTML tags) is left alone; document ids are ``TEMPLATE~NNNNN``. Each copy is parsed as the
store will parse it, and copies are added until the units reach the target.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.parse.sources import collect, read_corpus_jsonl
from evidence_loop.tools.types import DocumentInput

KB = Path(__file__).resolve().parent / "helpcentre" / "kb"
SWAP_SHARE = 0.125
_TAG = re.compile(r"(<[^>]*>)")
_CODE = re.compile(r"\b[A-Z][A-Z0-9]*-?[0-9]+[A-Za-z0-9]*\b")
_NUMBER = re.compile(r"(?<![A-Za-z0-9])[0-9]{1,4}(?![A-Za-z0-9])")
_WORD = re.compile(r"[A-Za-z]{4,}|[\u4e00-\u9fff]{2}")


def templates(sources: Sequence[Path]) -> list[DocumentInput]:
    """The help centre's articles, then every document of each evaluation set in ``sources``."""
    docs = list(collect([KB]).documents)
    for set_dir in sources:
        docs.extend(read_corpus_jsonl(set_dir / "corpus.jsonl"))
    return docs


def build(target_units: int, sources: Sequence[Path] = (), seed: int = 34) -> list[DocumentInput]:
    """Documents whose units add up to ``target_units`` or a little more, templates first."""
    bases = templates(sources)
    pool = _word_pool(bases)
    out: list[DocumentInput] = []
    units = 0
    for doc in _cycle(bases, seed, pool):
        if units >= target_units:
            break
        out.append(doc)
        units += len(parse_document(doc).units)
    return out


def _cycle(bases: list[DocumentInput], seed: int, pool: dict[bool, list[str]]) -> Iterator[DocumentInput]:
    yield from bases
    copy = 0
    while True:
        copy += 1
        for n, doc in enumerate(bases):
            yield _perturbed(doc, copy, random.Random(f"{seed}:{copy}:{n}"), pool)


def _word_pool(docs: Sequence[DocumentInput]) -> dict[bool, list[str]]:
    """Every word occurrence of the templates, Chinese (True) and English (False) apart."""
    pool: dict[bool, list[str]] = {True: [], False: []}
    for doc in docs:
        for text in _TAG.split(doc.text)[::2]:
            for word in _WORD.findall(text):
                pool[not word.isascii()].append(word)
    return pool


def _perturbed(
    doc: DocumentInput, copy: int, rng: random.Random, pool: dict[bool, list[str]]
) -> DocumentInput:
    def text(value: str) -> str:
        parts = _TAG.split(value)
        parts[::2] = [_words(piece, copy, rng, pool) for piece in parts[::2]]
        return "".join(parts)

    return replace(doc, doc_id=f"{doc.doc_id}~{copy:05d}", text=text(doc.text), title=text(doc.title))


def _words(text: str, copy: int, rng: random.Random, pool: dict[bool, list[str]]) -> str:
    text = _CODE.sub(lambda m: f"{m.group(0)}X{copy}", text)
    shift = rng.randint(1, 9)
    text = _NUMBER.sub(lambda m: f"{int(m.group(0)) + shift:0{len(m.group(0))}d}", text)

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        return rng.choice(pool[not word.isascii()]) if rng.random() < SWAP_SHARE else word

    return _WORD.sub(swap, text)
