"""PostgreSQL connection strings, apart from the connections: what settings, messages and the choice
of store need (``tools.store.pg`` re-exports them), without the store's SQL or its dependencies.

    is_url(location)        a ``postgresql://`` (or ``postgres://``) connection string?
    redact(url)             the URL without its password, for messages and logs
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

SCHEMES = ("postgresql://", "postgres://")


def is_url(location: object) -> bool:
    """True for a PostgreSQL connection string (the other locations are index folders)."""
    return isinstance(location, str) and location.startswith(SCHEMES)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``: connection strings end up in messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
