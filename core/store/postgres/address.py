"""PostgreSQL addresses: ``postgresql://user[:password]@host[:port]/database[?options]`` (``postgres://`` too).

libpq reads the credentials: from the URL, ``PGPASSWORD``, ``~/.pgpass`` or the other ``PG*`` variables. No
function here returns a secret: :func:`masked` is what logs, the app's MCP panel and messages show, with the
password of the user part and every secret query parameter (``password``, ``sslpassword``, any
``*password*`` or ``*secret*`` one, ``scram_*_key``) replaced by ``***``; :func:`scrub` takes them (and
``PGPASSWORD``'s value) out of any text. :func:`checked` refuses a malformed address in one line before
anything is opened, and :func:`near_miss` one that only looks like a database address.
"""

from __future__ import annotations

import ipaddress
import os
import re
from functools import lru_cache
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import pq

SCHEMES = ("postgresql", "postgres")
MASK = "***"
_SECRET_KEY = re.compile(r"password|secret|^scram_\w*key$", re.IGNORECASE)
_PORT = re.compile(r"[0-9]{1,5}")
_HOST_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?")


def is_postgres(address: str) -> bool:
    """Whether ``address`` is a PostgreSQL URL (``postgresql://`` or ``postgres://``, any case)."""
    scheme, sep, _ = address.strip().partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def _is_secret(key: str) -> bool:
    return bool(_SECRET_KEY.search(unquote(key)))


_LEADING_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)\s*(://|:/*|;?//)")


def _scheme(text: str) -> tuple[str, str, str]:
    """``(scheme, separator, rest)`` of ``text``: the separator as written, ``://`` or a near miss of it (``:``,
    ``:/``, ``//``…), so that even a mistyped address shows its password masked; ``("", "", text)`` without one."""
    found = _LEADING_SCHEME.match(text)
    if found is None:
        return "", "", text
    return found.group(1), found.group(2), text[found.end():]


def _split(address: str) -> tuple[str, str, str, str, str]:
    """``(scheme, user info, host part, path, query)`` of ``address`` by plain string cutting (never raises,
    whatever the address holds), the fragment dropped."""
    scheme, _, rest = _scheme(address.strip().partition("#")[0])
    before_query, _, query = rest.partition("?")
    at = before_query.rfind("@")
    userinfo, hostpart = (before_query[:at], before_query[at + 1:]) if at >= 0 else ("", before_query)
    hosts, slash, path = hostpart.partition("/")
    return scheme, userinfo, hosts, slash + path, query


def masked(address: str) -> str:
    """``address`` with its password and secret query parameters replaced by ``***``, fit to show or log (never
    raises, even for a malformed address)."""
    scheme, userinfo, hosts, path, query = _split(address)
    if not scheme:
        return scrub(address.strip())
    user, colon, _ = userinfo.partition(":")
    separator = _scheme(address.strip())[1]
    if separator != "://" and not colon:
        user = MASK  # a near miss: what stands before its @ may well be a password (postgres:PASSWORD@host)
    shown = scheme + separator
    if userinfo or "@" in address.partition("?")[0]:
        shown += f"{user}:{MASK}@" if colon else f"{user}@"
    shown += hosts + path
    if query:
        pairs = [pair.partition("=") for pair in query.split("&")]
        shown += "?" + "&".join(f"{k}{eq}{MASK if eq and _is_secret(k) else v}" for k, eq, v in pairs)
    return shown


def secrets(address: str) -> list[str]:
    """The secrets ``address`` holds (its password, secret query values) and ``PGPASSWORD``'s value, longest
    first, as given and URL-decoded: what :func:`scrub` takes out of a text."""
    _, userinfo, _, _, query = _split(address)
    found = []
    if ":" in userinfo:
        found.append(userinfo.partition(":")[2])
    elif userinfo and _scheme(address.strip())[1] not in ("", "://"):
        found.append(userinfo)  # a near miss's: as masked() hides it
    for pair in query.split("&"):
        key, eq, value = pair.partition("=")
        if eq and _is_secret(key):
            found.append(value)
    if os.environ.get("PGPASSWORD"):
        found.append(os.environ["PGPASSWORD"])
    every = {s for value in found for s in (value, unquote(value)) if s}
    return sorted(every, key=len, reverse=True)


_PASSWORD_IN_TEXT = re.compile(r"((?:\w*password|\w*secret\w*)\s*=\s*)('[^']*'|\S+)", re.IGNORECASE)


def scrub(text: str, address: str = "") -> str:
    """``text`` without the secrets of ``address`` nor ``PGPASSWORD``'s value, and any ``password=…`` in it
    masked (libpq's messages may quote a connection string)."""
    for secret in secrets(address):
        text = text.replace(secret, MASK)
    return _PASSWORD_IN_TEXT.sub(rf"\1{MASK}", text)


def without_password(address: str) -> str:
    """``address`` without its password nor secret query parameters: what goes into a client's configuration
    (libpq then reads the password from ``PGPASSWORD`` or ``~/.pgpass``)."""
    parts = urlsplit(address.strip())
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{parts.username}@{host}" if parts.username else host
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if not _is_secret(k)], quote_via=quote)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def identity(address: str) -> str:
    """``user@host:port/database`` of ``address`` (with its socket folder and ``options``, which may choose
    a schema): which memory it is, without the password."""
    parts = urlsplit(address.strip())
    query = dict(parse_qsl(parts.query))
    where = query.get("host", "")
    return f"{parts.username or ''}@{parts.hostname or where}:{parts.port or 5432}{parts.path}|{query.get('options', '')}"


def host_port(address: str) -> str:
    """``host:port`` of the server at ``address`` (the socket folder for a local socket), for messages."""
    _, _, hosts, _, query = _split(address)
    params = dict(parse_qsl(query))
    host, port = params.get("host", ""), params.get("port", "")
    if hosts:
        first = hosts.split(",")[0]
        if first.startswith("["):
            host, _, rest = first[1:].partition("]")
            port = rest.lstrip(":") or port
        else:
            host, _, given = first.partition(":")
            port = given or port
    host = host or "localhost"
    return f"{f'[{host}]' if ':' in host else host}:{port or 5432}"


def in_schema(address: str, schema: str) -> str:
    """``address`` with its memory in the schema ``schema`` (``search_path`` of the connection: ``schema``
    first, then ``public`` where the ``vector`` type lives)."""
    parts = urlsplit(address.strip())
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-c search_path={schema},public"))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query, quote_via=quote), parts.fragment))


@lru_cache(maxsize=1)
def known_parameters() -> frozenset[str]:
    """The connection parameters this libpq knows (``sslmode``, ``connect_timeout``, ``options``…)."""
    return frozenset(d.keyword.decode("ascii") for d in pq.Conninfo.get_defaults())


def _check_host(host: str, shown: str) -> None:
    if host.startswith("["):
        inside, close, port = host[1:].partition("]")
        if not close or (port and not port.startswith(":")):
            raise ValueError(f"{shown}: a bracketed IPv6 address needs its closing ']' before the port")
        try:
            ipaddress.IPv6Address(inside.partition("%")[0])
        except ValueError:
            raise ValueError(f"{shown}: [{inside}] is not an IPv6 address") from None
        port = port[1:]
    else:
        if host.count(":") > 1:
            raise ValueError(f"{shown}: write an IPv6 host in brackets, as [::1]:5432")
        host, _, port = host.partition(":")
        if host and not _HOST_NAME.fullmatch(unquote(host)) and not unquote(host).startswith("/"):
            raise ValueError(f"{shown}: {host!r} is not a host name")
    _check_port(port, shown, allow_empty=True)


def _check_port(port: str, shown: str, *, allow_empty: bool = False) -> None:
    if not port and allow_empty:
        return
    if not _PORT.fullmatch(port) or not 0 < int(port) <= 65535:
        raise ValueError(f"{shown}: the port must be a number from 1 to 65535, not {port!r}")


def checked(address: str) -> str:
    """``address`` made ready for libpq (its scheme lower-cased) once every part was checked.

    Raises:
        ValueError: a malformed address, in one line that names the part at fault and shows the address
            masked (:func:`masked`): a scheme other than ``postgresql``/``postgres``, a host that is no name
            nor a bracketed IPv6 address, a port outside 1–65535, a query parameter libpq does not know.
    """
    text = address.strip()
    shown = masked(text)
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise ValueError(f"{shown}: a PostgreSQL address starts with postgresql:// or postgres://")
    _, _, hosts, _, query = _split(text)
    for host in hosts.split(",") if hosts else ():
        _check_host(host, shown)
    for pair in query.split("&") if query else ():
        key, eq, value = pair.partition("=")
        key = unquote(key)
        if not eq or key not in known_parameters():
            raise ValueError(f"{shown}: unknown connection parameter {key!r} (see libpq's list of "
                             "connection parameters)")
        if key == "port":
            for port in unquote(value).split(","):
                _check_port(port, shown)
    ready = f"{scheme.lower()}://{rest}"
    try:
        psycopg.conninfo.conninfo_to_dict(ready)
    except psycopg.Error:
        raise ValueError(f"{shown}: not a valid PostgreSQL address") from None
    return ready


_NEAR_POSTGRES = re.compile(r"postgres(?:ql)?\s*(?::|;|//)", re.IGNORECASE)
_ONE_SLASH = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):/(?!/)")
_USER_AT_HOST = re.compile(r"[^/~.\s][^/\s]*@[^/\s]+/[^/\s]+")


def near_miss(text: str) -> str | None:
    """Why ``text``, given where a memory's address goes, looks like a database address but is not one (to be
    refused rather than taken for a file path, which would be created); None when it is not such a near miss.

    Near misses: a PostgreSQL scheme without its ``://`` (``postgresql:/…``, ``postgres:``, ``postgresql:user:pw@…``,
    ``postgresql//…``), another scheme with one slash (``mysql:/…``), an address in quotes, a libpq ``key=value``
    connection string (``host=… dbname=…``) and ``user[:password]@host/database`` without a scheme. The reason is one line showing ``text`` masked
    (:func:`masked`).
    """
    stripped = text.strip()
    if len(stripped) > 1 and stripped[0] in "'\"" and stripped[-1] == stripped[0]:
        inner = stripped[1:-1].strip()
        if is_postgres(inner) or near_miss(inner) is not None:
            return scrub(f"{stripped[0]}{masked(inner)}{stripped[0]}: write the address without quotes", inner)
        return None
    if is_postgres(stripped):
        return None  # an address: checked() checks its parts
    shown = masked(stripped)
    if _NEAR_POSTGRES.match(stripped):
        reason = (f"{shown}: not a PostgreSQL address; it starts with postgresql:// (a colon and two slashes), as "
                  "in postgresql://user@host/database")
    elif found := _ONE_SLASH.match(stripped):
        reason = (f"{shown}: {found.group(1)}:/ addresses are not supported; give the path of a database file or a "
                  "postgresql:// address")
    elif "=" in stripped and _conninfo_keys(stripped):
        reason = (f"{shown}: a key=value connection string; write it as a URL, as in "
                  "postgresql://user@host:5432/database")
    elif _USER_AT_HOST.match(stripped):
        reason = (f"{shown}: not a PostgreSQL address; write it as postgresql://user@host/database (a file in "
                  "a folder of that name: ./ before it)")
    else:
        return None
    for secret in secrets(stripped):  # whatever the masking missed
        reason = reason.replace(secret, MASK)
    return reason


def _conninfo_keys(text: str) -> list[str]:
    """The keys of ``text`` read as a libpq ``key=value`` connection string (each a parameter libpq knows), or
    none when it is not one."""
    try:
        return list(psycopg.conninfo.conninfo_to_dict(text))
    except psycopg.Error:
        return []


def _reason(text: str) -> str:
    """The first line of libpq's message, without its ``connection failed:`` preamble."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "no answer"
    first = re.sub(r"^(connection failed:\s*)+", "", lines[0])
    return re.sub(r'^connection to server (at|on) .*? failed:\s*', "", first) or first


def explain(address: str, exc: BaseException) -> str:
    """One line saying why ``address`` could not be used, in words a person can act on, without secrets."""
    shown = masked(address)
    text = scrub(str(exc), address)
    lowered = text.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return f"the database server at {shown} refused the login: wrong user name or password"
    if isinstance(exc, psycopg.OperationalError) and ("does not exist" in lowered and "database" in lowered):
        return f"the database in {shown} does not exist; create it first (createdb)"
    if isinstance(exc, psycopg.OperationalError):
        return f"cannot reach the database server at {shown}: {_reason(text)}"
    return f"the database server at {shown} failed: {type(exc).__name__}"
