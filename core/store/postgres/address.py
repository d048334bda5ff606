"""PostgreSQL addresses: ``postgresql://user[:password]@host[:port]/database[?options]`` (``postgres://`` too).

libpq reads the credentials: from the URL, ``PGPASSWORD``, ``~/.pgpass`` or the other ``PG*`` variables. No
function here returns the password: :func:`masked` is what logs, the app's MCP panel and messages show.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg

SCHEMES = ("postgresql", "postgres")


def is_postgres(address: str) -> bool:
    """Whether ``address`` is a PostgreSQL URL (``postgresql://`` or ``postgres://``, any case)."""
    scheme, sep, _ = address.strip().partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def masked(address: str) -> str:
    """``address`` with its password (if any) replaced by ``***``, fit to show or log."""
    parts = urlsplit(address.strip())
    if parts.password is None:
        return address.strip()
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    netloc = f"{user}:***@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def without_password(address: str) -> str:
    """``address`` without its password: what goes into a client's configuration (libpq then reads the password
    from ``PGPASSWORD`` or ``~/.pgpass``)."""
    parts = urlsplit(address.strip())
    if parts.password is None:
        return address.strip()
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    netloc = f"{parts.username}@{host}" if parts.username else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def identity(address: str) -> str:
    """``user@host:port/database`` of ``address`` (with its socket folder and ``options``, which may choose
    a schema): which memory it is, without the password."""
    parts = urlsplit(address.strip())
    query = dict(parse_qsl(parts.query))
    where = query.get("host", "")
    return f"{parts.username or ''}@{parts.hostname or where}:{parts.port or 5432}{parts.path}|{query.get('options', '')}"


def in_schema(address: str, schema: str) -> str:
    """``address`` with its memory in the schema ``schema`` (``search_path`` of the connection: ``schema``
    first, then ``public`` where the ``vector`` type lives)."""
    parts = urlsplit(address.strip())
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-c search_path={schema},public"))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query, quote_via=quote), parts.fragment))


def _reason(text: str) -> str:
    """The first line of libpq's message, without its ``connection failed:`` preamble."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "no answer"
    first = re.sub(r"^(connection failed:\s*)+", "", lines[0])
    return re.sub(r'^connection to server (at|on) .*? failed:\s*', "", first) or first


_PASSWORD_IN_TEXT = re.compile(r"(password\s*=\s*)\S+", re.IGNORECASE)


def explain(address: str, exc: BaseException) -> str:
    """One line saying why ``address`` could not be used, in words a person can act on, without secrets."""
    shown = masked(address)
    text = str(exc)
    parts = urlsplit(address.strip())
    if parts.password:
        text = text.replace(parts.password, "***")
    text = _PASSWORD_IN_TEXT.sub(r"\1***", text)
    lowered = text.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return f"the database server at {shown} refused the login: wrong user name or password"
    if isinstance(exc, psycopg.OperationalError) and ("does not exist" in lowered and "database" in lowered):
        return f"the database in {shown} does not exist; create it first (createdb)"
    if isinstance(exc, psycopg.OperationalError):
        return f"cannot reach the database server at {shown}: {_reason(text)}"
    return f"the database server at {shown} failed: {type(exc).__name__}"
