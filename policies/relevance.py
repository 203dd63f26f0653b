"""Relevance signals: the question's content terms, how many of them a text covers, recall scores as 0..1.

Content terms are the question's BM25 index tokens (``tools.tokenize.index_tokens``: Chinese
segmented, English stemmed, stop words gone) minus the words that only make it a question
("多久", "哪里", "explain"). Coverage is set membership in the text's own index tokens, with one
allowance for Chinese: segmentation depends on context, so "改期" in a question may come out of
"可改期一次" as another cut; a CJK term of two or more characters also counts when it occurs as a
substring of the normalised text.
"""

from __future__ import annotations

import re

from tools.tokenize import index_tokens, is_cjk

# Whole Chinese words that only ask (the tokenizer's STOPWORDS_ZH already drops 怎么/如何/什么/吗/...).
QUESTION_WORDS_ZH: frozenset[str] = frozenset(
    "多久 多长 多长时间 哪里 哪儿 哪些 哪个 哪种 哪家 哪位 哪几种 几 几个 几种 几次 几年 几天 多少 多少钱 "
    "为何 为啥 咋 咋办 啥 谁 何时 何地 什么时候 怎么办 怎么样 怎样 能不能 可不可以 是不是 有没有 请问 "
    "到底 呢 么 可 可否 如何 是否 能否 介绍 一下".split()
)
# Chinese words opening with these ask rather than name ("几年", "哪几种", "多少人", "怎么回事").
QUESTION_PREFIXES_ZH: tuple[str, ...] = ("几", "哪", "多少", "多久", "多长", "怎", "什么", "为什么")
QUESTION_WORDS_EN: frozenset[str] = frozenset(
    "how what which who whom whose when where why can could would should may might must shall "
    "please explain tell know want need able possible s t am any some not no also just through via "
    # help-desk framing: "how do I fix the X issue" asks about X
    "fix fixing solve resolve issue issues problem problems trouble help "
    # "what does X mean", "explain briefly", "what types of things can X do": the framing, not X
    "mean means meaning brief briefly particular specific thing things type types kind kinds sort "
    "different exactly actually basically about "
    # what is left of a contraction once its "'t" is split off ("don't" -> "don")
    "don doesn didn isn aren wasn weren won wouldn couldn shouldn".split()
)

_QUESTION_TOKENS_EN: frozenset[str] = frozenset(t for w in QUESTION_WORDS_EN for t in index_tokens(w))


def is_question_word(word: str) -> bool:
    """True for a Chinese or English word (normalised; English may be stemmed) that only makes a question."""
    if is_cjk(word):
        return word in QUESTION_WORDS_ZH or word.startswith(QUESTION_PREFIXES_ZH)
    return word in QUESTION_WORDS_EN or word in _QUESTION_TOKENS_EN


_HOW_MEASURE_RE = re.compile(r"\bhow\s+(?:long|many|much|often|far|soon|old)\b", re.IGNORECASE)


def content_terms(question: str) -> tuple[str, ...]:
    """The question's index tokens minus question words, deduplicated in order of appearance.

    "How long/many/much ..." asks for a measure: the measure word is part of the question, not a
    term the evidence must repeat.
    """
    stripped = _HOW_MEASURE_RE.sub(" ", question)
    terms = (t for t in index_tokens(stripped) if not is_question_word(t))
    return tuple(dict.fromkeys(terms))


def lexical_relevance(score: float, best: float, half_score: float) -> float:
    """A recall score mapped to 0..1: ``score / (best + half_score)``, ``best`` the query's best.

    For the best hit of a query this is the saturation ``best / (best + half_score)``; any other hit
    gets that scaled by its share of the best. Non-positive scores give 0; ``best`` below ``score``
    is treated as ``score``.

    ``half_score`` (``Policy.relevance_half_score``, 5) was chosen for raw BM25 scores, whose tops
    sat between 4 and 10 on the help-centre sets, so that a top of 5 gave 0.5. Recall scores are
    fused now (``tools.snapshot.Snapshot.search``): a unit's BM25 over the best unit's plus
    ``fusion_weight`` times its passage's over the best passage's, so at most 1 + ``fusion_weight``
    (2.5). The best hit of a query therefore maps to at most 2.5 / 7.5 = 1/3, and the signal mostly
    says how close a window's seed came to the query's best. The score weights and the judge were
    set with it as it is: another ``half_score`` changes outcomes.
    """
    if score <= 0:
        return 0.0
    return score / (max(best, score) + half_score)
