"""How a quote of a version stored as raw HTML reads: that version's text is the page's source.

Before clean text (``html.py``), an HTML page was stored as its source and its units were spans of
it, inline tags and entities included; the answer read each quote through :func:`visible_text`.
Those versions stay stored as they were (a stored text never changes, and their traces replay
against it), so their quotes are still read this way, with the same expression as then. Versions
stored since hold clean text and are quoted as they are.
"""

from __future__ import annotations

import html as _html
import re

_TOKEN_RE = re.compile(
    r"""<!--.*?(?:-->|\Z)
      | <(?P<raw>script|style)\b(?:"[^"]*"|'[^']*'|[^'">])*>.*?(?:</(?P=raw)\s*>|\Z)
      | <!\[CDATA\[.*?(?:\]\]>|\Z)
      | <[!?][^>]*(?:>|\Z)
      | <(?P<close>/?)(?P<name>[A-Za-z][A-Za-z0-9:-]*)(?:"[^"]*"|'[^']*'|[^'">])*?(?P<void>/?)>""",
    re.IGNORECASE | re.DOTALL | re.VERBOSE,
)
# Tags read as a space (they separate words); every other tag is dropped without one.
# fmt: off
_SPACED = frozenset({
    "li", "tr", "pre", "table", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6",
    "p", "div", "section", "article", "aside", "header", "footer", "nav", "main", "blockquote", "figure",
    "figcaption", "dl", "dt", "dd", "address", "details", "summary", "form", "fieldset", "legend", "hr",
    "center", "caption", "thead", "tbody", "tfoot", "title", "head", "body", "html", "option", "select",
    "textarea", "noscript", "hgroup", "menu", "dir", "iframe", "td", "th", "br",
})
# fmt: on


def visible_text(raw: str) -> str:
    """The text a reader sees in a slice of HTML source (a unit's text): tags, comments, scripts
    and styles removed, block-level tags read as spaces, entities decoded."""

    def replace(token: re.Match[str]) -> str:
        name = (token.group("name") or "").lower()
        return "" if name and name not in _SPACED else " "

    return _html.unescape(_TOKEN_RE.sub(replace, raw))
