"""Bilingual tokenization for BM25: Chinese segmented into words, English lower-cased and stemmed.

Text is NFKC-normalised and lower-cased, then cut into runs: runs of CJK characters go to the
jieba segmenter (rjieba), other runs are split into words; English stop words are dropped and the
rest Snowball-stemmed. Mixed text ("X200 保修几年") is handled run by run.

Two token lists come out of it: :func:`index_tokens` (words only, for term coverage) and
:func:`recall_tokens` (words plus CJK character bigrams, for BM25 recall), because the segmenter
may cut the same phrase differently in a question and in a document ("保修期" vs "保修 期").
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache
from typing import Any

from evidence_loop.tools.types import INVISIBLE_CHARS

# The CJK ideographs (extension A, the unified block, compatibility ideographs): the one definition
# of "Chinese script" that parsing, tokenizing and every policy read.
CJK_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUN_RE = re.compile(rf"[{CJK_CHARS}]+|[^\W_{CJK_CHARS}]+(?:[.\-][^\W_{CJK_CHARS}]+)*")
_CJK_RUN_RE = re.compile(rf"[{CJK_CHARS}]+")
_WORD_RE = re.compile(rf"[^\W_{CJK_CHARS}]+")
_INVISIBLE_RE = re.compile(f"[{INVISIBLE_CHARS}]")

STOPWORDS_EN: frozenset[str] = frozenset(
    "a an and are as at be but by for from has have how i if in into is it its me my of on or our so "
    "that the their then there these they this to was we were what when where which who why will with "
    "you your do does did can could should would".split()
)
STOPWORDS_ZH: frozenset[str] = frozenset(
    "的 了 吗 呢 吧 啊 是 在 和 与 及 或 我 你 您 他 她 它 我们 你们 这 那 这个 那个 "
    "怎么 怎样 如何 什么 哪些 哪个 为什么 是否 可以 能 能否 会 要 需要 请问 一下 "
    "有 没有 么 呀 嘛 就 都 也 还 把 被 对 从".split()
)


@cache
def _stemmer() -> Any:
    """The English stemmer, made when first needed (as the segmenter: a command that tokenizes
    nothing, `evloop docs`, does not load them)."""
    import Stemmer

    return Stemmer.Stemmer("english")


@cache
def _segmenter() -> Any:
    import rjieba  # loads its dictionary: a third of a second on a busy core

    return rjieba


def normalize(text: str) -> str:
    """NFKC and lower case: the form every comparison in the project uses."""
    return unicodedata.normalize("NFKC", text).lower()


def visible(text: str) -> str:
    """``text`` without the code points that print nothing (``tools.types.INVISIBLE_CHARS``):
    "忽\u200b略" reads as "忽略" to a person, so a screen of what text says reads it so too."""
    return _INVISIBLE_RE.sub("", text) if _INVISIBLE_RE.search(text) else text


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def _cut_cjk(run: str) -> list[str]:
    return [w for w in _segmenter().cut(run) if w.strip()]


def words(text: str) -> list[str]:
    """Surface words in order: CJK words from segmentation, other words as written (normalised)."""
    out: list[str] = []
    for match in _RUN_RE.finditer(normalize(text)):
        run = match.group()
        if _CJK_RUN_RE.fullmatch(run):
            out.extend(_cut_cjk(run))
        else:
            out.extend(_WORD_RE.findall(run))
    return out


def tagged(text: str) -> list[tuple[str, str]]:
    """Surface words in order with a part of speech: CJK words as jieba tags them ("n" a noun, "v" a
    verb, ...), every other word "eng"."""
    out: list[tuple[str, str]] = []
    for match in _RUN_RE.finditer(normalize(text)):
        run = match.group()
        if _CJK_RUN_RE.fullmatch(run):
            out.extend((w, tag) for w, tag in _segmenter().tag(run) if w.strip())
        else:
            out.extend((w, "eng") for w in _WORD_RE.findall(run))
    return out


@lru_cache(maxsize=1)
def _homophones() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(character -> its readings without tones, reading -> the characters that have it), from
    pypinyin's table (imported on first use: only a Chinese word no passage holds asks)."""
    from pypinyin.pinyin_dict import pinyin_dict

    readings: dict[str, tuple[str, ...]] = {}
    chars: dict[str, list[str]] = {}
    for code, toned in pinyin_dict.items():
        char = chr(code)
        if not _CJK_RUN_RE.fullmatch(char):
            continue
        plain = tuple(dict.fromkeys(_untoned(r) for r in toned.split(",")))
        readings[char] = plain
        for reading in plain:
            chars.setdefault(reading, []).append(char)
    return readings, {k: tuple(v) for k, v in chars.items()}


def _untoned(reading: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", reading) if not unicodedata.combining(c))


def homophone_variants(word: str) -> list[str]:
    """The words of the segmenter's dictionary one character away from ``word`` that read the same
    ("充电" for "冲电"): what a pinyin input method types by mistake. Empty for a word that is not
    all CJK."""
    if not is_cjk(word):
        return []
    readings, chars = _homophones()
    out: list[str] = []
    for i, char in enumerate(word):
        for reading in readings.get(char, ()):
            out.extend(word[:i] + other + word[i + 1 :] for other in chars[reading] if other != char)
    return [w for w in dict.fromkeys(out) if _segmenter().has_word(w)]


def is_cjk(word: str) -> bool:
    """True when the word is made of CJK characters only."""
    return bool(_CJK_RUN_RE.fullmatch(word))


def index_tokens(text: str) -> list[str]:
    """Tokens for BM25: stop words dropped, English stemmed, Chinese words kept as segmented."""
    out: list[str] = []
    for word in words(text):
        if is_cjk(word):
            if word not in STOPWORDS_ZH:
                out.append(word)
        elif word not in STOPWORDS_EN:
            out.append(_stem(word))
    return out


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping character pairs of every CJK run; a one-character run is kept as that character."""
    out: list[str] = []
    for run in _CJK_RUN_RE.findall(normalize(text)):
        out.extend([run[i : i + 2] for i in range(len(run) - 1)] or [run])
    return out


def recall_tokens(text: str) -> list[str]:
    """Tokens for BM25 recall: :func:`index_tokens` followed by :func:`cjk_bigrams`.

    The bigrams let a query match a document whose words the segmenter cut differently; a
    two-character word also appears as its own bigram, which doubles its weight on purpose
    (whole words are the stronger evidence).
    """
    return index_tokens(text) + cjk_bigrams(text)
