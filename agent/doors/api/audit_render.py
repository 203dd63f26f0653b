"""How a console page is rendered and sent: the package's Jinja2 templates, stored text shown as
``tools.printable`` writes it, and the headers every console page carries.

Every page and asset comes from the package (``templates/audit``, ``static/audit``): no CDN, no
fonts from elsewhere, a little plain JavaScript, no inline script or style. Each page is sent with a
Content-Security-Policy that holds it to that (``default-src 'self'``) and forbids framing it
(``frame-ancestors 'none'``, ``X-Frame-Options: DENY``), and with ``Referrer-Policy: same-origin``
(no address of the console reaches another site).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import jinja2
import markupsafe
from fastapi.responses import HTMLResponse

from evidence_loop.tools.printable import printable

HERE: Final = Path(__file__).resolve().parent
# A page's own scripts and styles only (no inline script, nothing from elsewhere), and never framed.
CONSOLE_HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer would make a browser send its POSTs with Origin: null
    "X-Content-Type-Options": "nosniff",
}


def _visible(value: object) -> object:
    """A value as a page shows it: text with its control and bidi characters as escapes (a question
    holding U+202E shows ``\\u202e`` instead of reversing the rest of the line), newlines kept."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return printable(value, keep="\n\r\t")
    return value


_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates" / "audit"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    finalize=_visible,
)


def render(name: str, *, status: int = 200, **values: Any) -> HTMLResponse:
    """The template ``name`` rendered with ``values``, sent with the console's headers."""
    html = _TEMPLATES.get_template(name).render(**values)
    return HTMLResponse(html, status_code=status, headers=CONSOLE_HEADERS)
