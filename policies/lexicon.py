"""Chinese and English word lists the policies read, in one place.

A word that changes a decision lives here, so that adding one is one edit that every reader of it
sees. Patterns that are syntax rather than vocabulary (a list marker, "第…条") stay with the rule
that reads them. Stop words are the tokenizer's (``tools.tokenize``).

Groups: the words of boundaries (connectives, dangling openings); the words of cross-references
(rule nouns and what a referenced name is not).
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    """A set of words written as one line of text: a list reads better as the words themselves."""
    return frozenset(text.split())


CONNECTIVES_ZH: frozenset[str] = _words(
    "以及 并且 而且 或者 但是 因为 由于 如果 包括 例如 比如 即 和 与 及 或 并 且 但 而 跟 还有"
)
CONNECTIVES_EN: frozenset[str] = _words(
    "and or but nor with of to the a an for from in on by that which including because if when while "
    "than as into via plus such e.g. i.e."
)
# Openings that need what came before, longest first so "此外" wins over "此".
DANGLING_ZH: tuple[str, ...] = tuple(
    sorted(
        "除此之外 与此同时 此外 此时 此处 此类 此 该 上述 以上 但是 但 不过 然而 其中 另外 "
        "同时 因此 所以 因而 否则 反之 对此 它们 它 这些 这个 这种 这样 这里 这 那么 而且 并且".split(),
        key=len,
        reverse=True,
    )
)
# Openings that start with a dangling word but are not: "这边建议您" (= "we suggest"), "该如何".
NOT_DANGLING_ZH: tuple[str, ...] = ("这边", "该如何", "该怎", "该不该", "但凡", "以上海")

# What a rule is called: a reference to one is something the answer may depend on.
RULE_NOUNS_ZH: tuple[str, ...] = tuple("规则 规定 办法 政策 制度 条款 协议 细则 章程 须知".split())
# A standard is referred to the way a rule is ("按照国家标准执行"), but the answer does not depend on
# it the way it depends on a rule ("请参考ES5标准" sends a developer to a specification).
STANDARD_NOUN_ZH = "标准"
# Pointers inside the same text ("请参考以下步骤", "可参考上方配置") and names that say nothing.
INTERNAL_REF_PREFIXES: tuple[str, ...] = tuple(
    "以下 如下 下列 下方 下面 下图 上图 下文 上文 上方 上面 上述 "
    "本 此 该 这 图 附图 前文 后文 示例 正文 第".split()
)
GENERIC_REF_NAMES: frozenset[str] = frozenset((*RULE_NOUNS_ZH, STANDARD_NOUN_ZH)) | _words(
    "文档 链接 说明 官网 页面 帮助文档 教程 视频 截图"
)
# A name holding these is a clause, not a title: the link text was stripped and the next words ran on.
NOT_IN_REF_NAME_ZH: frozenset[str] = _words(
    "是 可以 如果 您 你 我们 需要 的话 即可 就 都 会 要 能 请 点击 进行 不 也 还 已 后 时 建议"
)
NOT_REF_NAME_START_ZH: tuple[str, ...] = tuple(
    "由于 根据 其中 如果 若 因为 当 对于 通过 使用 自行 所有 为了 按照 一般 目前 先".split()
)
# A name after a weak marker ("according to …") counts only when it holds one of these.
REFERENCE_NOUNS_EN: frozenset[str] = _words(
    "policy policies rules rule terms agreement guide guidelines manual section chapter article clause "
    "conditions procedure faq appendix"
)
