"""An HTML page read with lxml: its tree, the element that holds its main content, what is page
furniture, and its title.

Why lxml (``lxml.html``, libxml2's HTML parser): it reads any real page (unclosed tags, stray end
tags, entities, a ``<meta charset>``) into a tree the way browsers recover, it is fast (a help
article in well under a millisecond, ``benchmarks/bench_html.py``), typed (``types-lxml``) and
maintained for twenty years. The content extractors were measured on the same furnished pages
(``benchmarks/bench_html.py``, ``docs/formats.md``) and not taken: trafilatura and readability-lxml
find the main content too, but drop the article's ``<h1>``, number no list and hand back text
without the offsets or the structure the units need (headings, list items, table rows with their
cells), at 6 to 14 times the cost; jusText drops a short article whole. selectolax (faster) and
BeautifulSoup (far slower) only parse: choosing the content would be the same work on top of them,
and lxml, which the extractors themselves build on, has XPath and typed stubs. So the main content
is chosen here by what the page says about itself:

- the root is the page's ``<main>`` (or ``role="main"``), else its largest ``<article>`` if that
  holds at least half the page's text, else ``<body>``;
- page furniture under it is dropped: ``<nav>``, ``<footer>``, a ``<header>`` that holds no
  ``<h1>``, an ``<aside>`` outside any ``<main>``/``<article>``, ``<dialog>``, elements whose
  ``role`` is navigation, banner, contentinfo, search, dialog or alertdialog, and elements whose
  ``class`` or ``id`` holds a furniture word (breadcrumb, cookie, consent, sidebar,
  related, feedback, vote, helpful, share, pagination, meta, ...: ``FURNITURE_TOKENS``);
- never content: ``<head>`` (``<title>`` included), scripts, styles, templates, forms' controls
  (buttons, inputs, selects), images, media and embedded frames;
- a page whose main content comes out empty is read again from ``<body>``, then from ``<body>``
  with nothing dropped but the never-content elements: boilerplate removal never empties a page
  that has text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lxml import etree
from lxml import html as lxml_html

HtmlElement = lxml_html.HtmlElement
Skip = Callable[[HtmlElement], bool]

HEADINGS = {f"h{n}": n for n in range(1, 7)}
# Never visible text: dropped wherever they are.
NEVER_CONTENT = frozenset({
    "head", "title", "meta", "link", "base", "script", "style", "noscript", "template", "svg", "math",
    "iframe", "object", "embed", "canvas", "video", "audio", "img", "picture", "map", "area", "button",
    "input", "select", "option", "optgroup", "textarea", "datalist", "output", "progress", "meter",
})  # fmt: skip
FURNITURE_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "dialog", "alertdialog"})
# Words of class and id values that name page furniture (split at anything not a letter).
FURNITURE_TOKENS = frozenset({
    "breadcrumb", "breadcrumbs", "crumbs", "cookie", "cookies", "consent", "gdpr", "navbar", "nav",
    "navigation", "menu", "sidebar", "footer", "masthead", "topbar", "related", "relatives", "feedback",
    "vote", "votes", "voting", "helpful", "rating", "share", "sharing", "social", "pagination", "pager",
    "skip", "toc", "comments", "newsletter", "subscribe", "signup", "promo", "advert", "ads", "recent",
    "recently", "meta", "byline", "author", "search",
})  # fmt: skip
_HEADER_TOKENS = frozenset({"header"})
_TOKEN_RE = re.compile(r"[^a-z]+")
_SEPARATORS = (" | ", " – ", " — ", " - ", " · ", " :: ", " » ")
_SPACE_RE = re.compile(r"[ \t\n\r\f\v\xa0]+")
_ARTICLE_SHARE = 0.5  # of the page's text, for an <article> to be taken as its main content


def collapse_space(text: str) -> str:
    """Runs of spaces, tabs, newlines and no-break spaces as one space, trimmed: text as shown."""
    return _SPACE_RE.sub(" ", text).strip()


def read_tree(source: str) -> HtmlElement | None:
    """The page's ``<html>`` element (comments and processing instructions dropped); None when the
    source holds no element at all."""
    parser = lxml_html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        return lxml_html.document_fromstring(source.encode("utf-8", "surrogatepass"), parser=parser)
    except (etree.ParserError, ValueError):
        return None


def body_of(page: HtmlElement) -> HtmlElement:
    """``<body>``, or the page itself when it has none."""
    body = page.find("body")
    return body if body is not None else page


def content_root(page: HtmlElement) -> HtmlElement:
    """The element holding the main content: ``<main>``, else the largest ``<article>`` when it holds
    at least half the page's text (not a related-article card beside a ``<div>`` article), else ``<body>``."""
    mains = page.xpath("//main | //*[@role='main']")
    if mains:
        return mains[0]  # type: ignore[no-any-return]
    body = body_of(page)
    articles: list[HtmlElement] = page.xpath("//article")
    if articles:
        sizes = [(len(element_text(a, furniture_skip)), a) for a in articles]
        size, largest = max(sizes, key=lambda pair: pair[0])
        if size >= _ARTICLE_SHARE * len(element_text(body, furniture_skip)):
            return largest
    return body


def never_content(el: HtmlElement) -> bool:
    """Elements that are never text a reader sees."""
    return el.tag in NEVER_CONTENT


def _tokens(el: HtmlElement) -> set[str]:
    # class and id name what an element is; aria-label is prose ("Steps to search your inbox")
    words = " ".join(el.get(name) or "" for name in ("class", "id")).lower()
    return set(_TOKEN_RE.split(words)) - {""}


def _in_content_element(el: HtmlElement) -> bool:
    return any(a.tag in ("main", "article") or a.get("role") == "main" for a in el.iterancestors())


def is_furniture(el: HtmlElement) -> bool:
    """Navigation, banners, footers, sidebars, cookie notices, votes and related links (module docstring)."""
    tag = el.tag
    if tag in ("nav", "footer", "dialog") or (el.get("role") or "").lower() in FURNITURE_ROLES:
        return True
    tokens = _tokens(el)
    if tokens & FURNITURE_TOKENS:
        return True
    if tag == "header" or tokens & _HEADER_TOKENS:
        return next(el.iter("h1"), None) is None
    return tag == "aside" and not _in_content_element(el)


def furniture_skip(el: HtmlElement) -> bool:
    """What a reading of the main content leaves out."""
    return never_content(el) or is_furniture(el)


def readings(page: HtmlElement) -> list[tuple[HtmlElement, Skip]]:
    """The readings to try in order until one has text: main content, then the body, then the body
    with only never-content elements left out."""
    body = body_of(page)
    root = content_root(page)
    out: list[tuple[HtmlElement, Skip]] = [(root, furniture_skip)]
    if root is not body:
        out.append((body, furniture_skip))
    out.append((body, never_content))
    return out


def element_text(el: HtmlElement, skip: Skip) -> str:
    """The text an element shows, elements ``skip`` names left out, spaces collapsed."""
    pieces: list[str] = []
    _gather(el, skip, pieces)
    return collapse_space("".join(pieces))


def _gather(el: HtmlElement, skip: Skip, pieces: list[str]) -> None:
    if el.text:
        pieces.append(el.text)
    for child in el:
        if isinstance(child.tag, str) and not skip(child):
            pieces.append(" " if child.tag not in INLINE else "")
            _gather(child, skip, pieces)
            pieces.append(" " if child.tag not in INLINE else "")
        if child.tail:
            pieces.append(child.tail)


INLINE = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font", "i", "ins",
    "kbd", "label", "mark", "nobr", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strike",
    "strong", "sub", "sup", "time", "tt", "u", "var", "wbr",
})  # fmt: skip


def cut_site_name(title: str) -> str:
    """A ``<title>`` without its site suffix: "Reset your password | Acme Help" -> "Reset your password"."""
    for separator in _SEPARATORS:
        head, found, _ = title.rpartition(separator)
        if found and head.strip():
            return head.strip()
    return title


def page_title(page: HtmlElement) -> str:
    """The main content's first ``<h1>``, else ``<title>`` without its site suffix, else the main
    content's first heading, else ""."""
    root, skip = content_root(page), furniture_skip
    for heading in root.iter("h1"):
        if text := element_text(heading, skip):
            return text
    title = page.find(".//title")
    if title is not None and (text := collapse_space(title.text_content())):
        return cut_site_name(text)
    for heading in root.iter("h2", "h3", "h4", "h5", "h6"):
        if text := element_text(heading, skip):
            return text
    return ""
