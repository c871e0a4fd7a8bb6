"""Each kind of connection: what its URL and options must be (checked, with a sentence for the user
when they are not), and the endpoint its sandbox is let out to (host, port, and whether sandboxd
forwards TCP to it or admits it through its HTTP(S) proxy)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
KINDS = ("postgres", "mysql", "sqlite", "duckdb", "s3", "http")
SQL_SCHEMES = {
    "postgres": {"postgresql", "postgres"},
    "mysql": {"mysql", "mariadb"},
}
DEFAULT_PORTS = {"postgres": 5432, "mysql": 3306}
FILE_KINDS = {"sqlite": "sqlite", "duckdb": "duckdb"}  # kind: the file's extension in the sandbox
FOLDER = ".connections"  # where their databases go in the workdir
FILE_MAGIC = {"sqlite": (0, b"SQLite format 3\x00"), "duckdb": (8, b"DUCK")}
OPTIONS = {
    "postgres": set(),
    "mysql": set(),
    "sqlite": set(),
    "duckdb": set(),
    "s3": {"endpoint_url", "bucket", "prefix", "key_id", "region"},
    "http": {"header", "scheme"},
}
SECRET_WORDS = ("password", "passwd", "secret", "token", "api_key", "apikey")
MAX_OPTION = 500
PUT_IT_IN_SECRET = "put the password in secret, not in the URL"  # noqa: S105  # words, no password


class BadConnection(ValueError):
    """What is wrong with a connection's fields, in a sentence for the user."""


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    mode: str  # "tcp": forwarded as it is; "http": admitted by the sandbox's HTTP(S) proxy


def check_name(name: object) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise BadConnection(
            "a connection's name is a lowercase identifier (a letter, then letters, digits or _,"
            f" at most 63), such as warehouse: not {name!r}"
        )
    return name


def check_kind(kind: object) -> str:
    if kind not in KINDS:
        raise BadConnection(f"kind must be one of {', '.join(KINDS)}: not {kind!r}")
    return str(kind)


def is_file_kind(kind: str) -> bool:
    return kind in FILE_KINDS


def check(kind: str, url: object, options: object) -> tuple[str, dict[str, Any]]:
    """The URL and options of a connection of ``kind``, checked and completed. Raises BadConnection."""
    if not isinstance(url, str):
        raise BadConnection("url must be a string")
    if not isinstance(options, dict):
        raise BadConnection("options must be a JSON object")
    url = url.strip()
    unknown = sorted(set(options) - OPTIONS[kind])
    if unknown:
        if any(word in unknown[0].lower() for word in SECRET_WORDS):
            raise BadConnection(f"put the {unknown[0]} in secret, not in the options")
        allowed = ", ".join(sorted(OPTIONS[kind])) or "none"
        raise BadConnection(f"a {kind} connection takes no option {unknown[0]!r} (it takes: {allowed})")
    for key, value in options.items():
        if not isinstance(value, str) or len(value) > MAX_OPTION:
            raise BadConnection(f"option {key!r} must be a string of at most {MAX_OPTION} characters")
    if kind in SQL_SCHEMES:
        return _sql_url(kind, url), {}
    if kind in FILE_KINDS:
        if url:
            raise BadConnection(f"a {kind} connection is a file: send it as file, with no url")
        return "", {}
    if kind == "s3":
        return _s3(url, options)
    return _http(url, options)


def _sql_url(kind: str, url: str) -> str:
    parts = _split(
        url, SQL_SCHEMES[kind], example=f"{sorted(SQL_SCHEMES[kind])[-1]}://analyst@db.internal/sales"
    )
    if not parts.username:
        raise BadConnection("the URL must name the user to connect as, such as analyst@db.internal")
    if not parts.path.strip("/"):
        raise BadConnection("the URL must name the database, such as …/sales")
    return url


def _s3(url: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    endpoint = options.get("endpoint_url") or url
    if not endpoint:
        raise BadConnection(
            "an s3 connection needs the store's endpoint_url (https://s3.<region>.amazonaws.com for AWS)"
        )
    _split(endpoint, {"http", "https"}, example="https://s3.eu-west-1.amazonaws.com")
    if not options.get("bucket"):
        raise BadConnection("an s3 connection needs its bucket")
    return url, {**options, "endpoint_url": endpoint}


def _http(url: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    _split(url, {"http", "https"}, example="https://api.example.com/v1")
    header = options.get("header", "Authorization")
    if not re.fullmatch(r"[A-Za-z0-9-]{1,100}", header):
        raise BadConnection(f"header must be an HTTP header's name, such as Authorization: not {header!r}")
    return url, {"header": header, "scheme": options.get("scheme", "Bearer")}


def _split(url: str, schemes: set[str], *, example: str) -> Any:
    if not url:
        raise BadConnection(f"url is required, such as {example}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises on a port that is not a number in range
    except ValueError:
        raise BadConnection(f"the URL is not one: {url!r} (such as {example})") from None
    scheme = parts.scheme.split("+")[0].lower()
    if scheme not in schemes:
        raise BadConnection(f"the URL must start with {' or '.join(sorted(s + '://' for s in schemes))}")
    if parts.password is not None:
        raise BadConnection(PUT_IT_IN_SECRET)
    if any(key.lower() in SECRET_WORDS for key, _ in parse_qsl(parts.query)):
        raise BadConnection(PUT_IT_IN_SECRET)
    if not parts.hostname:
        raise BadConnection(f"the URL must name a host, such as {example}")
    return parts


def endpoint(kind: str, url: str, options: dict[str, Any]) -> Endpoint | None:
    """Where the sandbox must reach for a connection of ``kind`` (None for a file)."""
    if kind in SQL_SCHEMES:
        parts = urlsplit(url)
        return Endpoint(parts.hostname or "", parts.port or DEFAULT_PORTS[kind], "tcp")
    if kind in FILE_KINDS:
        return None
    parts = urlsplit(options["endpoint_url"] if kind == "s3" else url)
    return Endpoint(parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80), "http")


def check_file(kind: str, head: bytes) -> None:
    """``head``: the file's first bytes. Raises BadConnection when it is not a database of ``kind``."""
    offset, magic = FILE_MAGIC[kind]
    if head[offset : offset + len(magic)] != magic:
        what = "a SQLite database" if kind == "sqlite" else "a DuckDB database"
        raise BadConnection(f"the file is not {what}")


def file_path(name: str, kind: str) -> str:
    """Where a file connection's database is put in the sandbox's workdir: a hidden folder, which
    the files panel does not list and no download serves (a share link's viewer must never get
    the database)."""
    return f"{FOLDER}/{name}.{FILE_KINDS[kind]}"
