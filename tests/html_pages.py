"""Help-centre pages with their furniture, as real ones are served: for the HTML parse's tests and
``benchmarks/bench_html.py``.

``furnished_page`` is an article as a help-centre theme serves it (a ``<title>`` with the site's
name, styles, scripts, a cookie banner, a header with navigation and search, a breadcrumb, the
article in ``<main>``/``<article>`` with inline markup, entities, a numbered procedure, a table, a
code block, then "Was this article helpful?", related articles and a footer). ``FURNITURE`` is
text that only the furniture holds; ``CONTENT`` is text of the article, as a reader sees it.
``div_page`` is an article laid out in ``<div>`` without ``<main>`` or ``<article>``, ``table_page``
a page that is only a table, ``generated_pages`` varied furnished pages for timing.
"""

from __future__ import annotations

import random
import re

HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} | Acme Help Centre</title>
<link rel="stylesheet" href="/assets/theme.css">
<style>body {{ font-family: Inter, sans-serif; }} .cookie-banner {{ position: fixed; }}</style>
<script>window.dataLayer = window.dataLayer || []; function gtag(){{dataLayer.push(arguments);}}</script>
<script type="application/ld+json">{{"@type": "Article", "headline": "{title}"}}</script>
</head>
<body>
<div id="cookie-banner" class="cookie-banner" role="dialog" aria-label="Cookie consent">
  <p>We use cookies to improve your experience. <a href="/privacy">Cookie policy</a></p>
  <button>Accept all cookies</button>
</div>
<header class="site-header">
  <a class="logo" href="/">Acme Help Centre</a>
  <nav class="main-nav"><a href="/">Home</a> <a href="/community">Community</a>
    <a href="/signin">Sign in</a></nav>
  <form role="search" action="/search"><input type="search" placeholder="Search articles"></form>
</header>
"""

ARTICLE = """<main id="main-content">
<nav class="breadcrumbs" aria-label="Breadcrumb"><a href="/">Home</a> &gt;
  <a href="/account">Account</a> &gt; {title}</nav>
<article class="article">
<header class="article-header">
<h1>{title}</h1>
<p class="article-meta">Updated 3 days ago</p>
</header>
<div class="article-body">
<p>If you forgot your password, use <b>Forgot password</b> on the <a href="/signin">sign-in page</a>.
It&#8217;s free &amp; takes about&nbsp;2&nbsp;minutes.</p>
<h2>Steps</h2>
<p>To reset your password:</p>
<ol>
<li>Open the sign-in page and choose <b>Forgot password</b>.</li>
<li>Enter the e-mail address of your {product} account.</li>
<li>Open the reset link in the email. The link expires after {minutes} minutes.</li>
</ol>
<h2>Plans</h2>
<table>
<thead><tr><th>Plan</th><th>Price per month</th><th>Users</th></tr></thead>
<tbody>
<tr><td>Starter</td><td>${starter}</td><td>5</td></tr>
<tr><td>Business</td><td>${business}</td><td>50</td></tr>
</tbody>
</table>
<h3>Using the API</h3>
<p>Call the endpoint with your token:<br>it returns a new link.</p>
<pre><code>curl -X POST https://api.acme.example/v1/reset \\
  -H "Authorization: Bearer &lt;token&gt;"</code></pre>
<ul><li>Links work once.</li><li>Use <code>--force</code> to resend.</li></ul>
</div>
<footer class="article-footer">
<div class="article-votes"><span>Was this article helpful?</span>
  <button>Yes</button> <button>No</button></div>
<p>3 out of 5 found this helpful</p>
</footer>
</article>
<section class="related-articles"><h3>Related articles</h3>
<ul><li><a href="/a/2">Change your e-mail address</a></li>
  <li><a href="/a/3">Two-step verification</a></li></ul>
</section>
</main>
"""

TAIL = """<footer class="site-footer">
<p>&copy; 2026 Acme Inc. All rights reserved.</p>
<a href="/terms">Terms</a> <a href="/privacy">Privacy</a>
</footer>
<script src="/assets/app.js"></script>
<script>document.querySelector('.cookie-banner button').onclick = function(){{}};</script>
</body>
</html>
"""

FURNITURE = (
    "Acme Help Centre", "We use cookies", "Accept all cookies", "Cookie policy", "Community", "Sign in",
    "Search articles", "Home", "Updated 3 days ago", "Was this article helpful", "found this helpful",
    "Related articles", "Change your e-mail address", "©", "All rights reserved", "Terms", "Privacy",
    "dataLayer", "font-family", "headline", "querySelector",
)  # fmt: skip
CONTENT = (
    "Reset your password",
    "If you forgot your password, use Forgot password on the sign-in page.",
    "It’s free & takes about 2 minutes.",
    "To reset your password:",
    "1. Open the sign-in page and choose Forgot password.",
    "3. Open the reset link in the email. The link expires after 60 minutes.",
    "| Starter | $10 | 5 |",
    "Call the endpoint with your token:",
    'curl -X POST https://api.acme.example/v1/reset \\\n  -H "Authorization: Bearer <token>"',
    "- Use --force to resend.",
)


# A tag of the elements these pages use, a comment or an entity: markup a unit must not hold.
MARKUP_RE = re.compile(
    r"</?(?:html|head|body|title|meta|script|style|div|span|p|a|b|i|em|strong|code|pre|ul|ol|li|table|tr|td|th"
    r"|h[1-6]|br|nav|header|footer|main|article|section|button|form|input)\b[^>]*>|<!--"
    r"|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]{1,31});"
)


def furnished_page(
    title: str = "Reset your password", product: str = "Acme", minutes: int = 60, starter: int = 10,
    business: int = 45,
) -> str:  # fmt: skip
    """A help article with a help-centre theme's furniture around it."""
    fields = {"title": title, "product": product, "minutes": minutes}
    fields |= {"starter": starter, "business": business}
    return HEAD.format(**fields) + ARTICLE.format(**fields) + TAIL.format()


def div_page() -> str:
    """An article in plain ``<div>`` blocks: no ``<main>``, no ``<article>``, furniture around it."""
    return (
        "<html><head><title>Delivery times - Acme Help</title></head><body>"
        "<div class='header'><a href='/'>Acme</a>"
        "<ul class='menu'><li><a href='/shop'>Shop</a></li></ul></div>"
        "<div class='breadcrumb'><a href='/'>Home</a> / Delivery</div>"
        "<div class='content'><h1>Delivery times</h1>"
        "<div>Orders placed before 2 pm ship the same day.</div>"
        "<div>Standard delivery takes 3 to 5 working days.</div></div>"
        "<div class='footer'>&copy; 2026 Acme Inc.</div></body></html>"
    )


def table_page() -> str:
    """A page that is only a table."""
    return (
        "<table><tr><th>Region</th><th>Support hours</th></tr>"
        "<tr><td>EU</td><td>8:00-18:00 CET</td></tr><tr><td>US</td><td>9:00-17:00 ET</td></tr></table>"
    )


def generated_pages(count: int, seed: int = 7) -> list[str]:
    """``count`` furnished pages with varied titles, products and values."""
    rng = random.Random(seed)
    titles = ("Reset your password", "Change your plan", "Export your data", "Cancel a subscription")
    products = ("Acme", "Acme Cloud", "Acme Pro")
    pages = []
    for n in range(count):
        title, product = f"{rng.choice(titles)} ({n})", rng.choice(products)
        values = rng.randint(5, 90), rng.randint(5, 20), rng.randint(30, 90)
        pages.append(furnished_page(title, product, *values))
    return pages
