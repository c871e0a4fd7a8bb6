"""The session's attached connections, inside a kernel (imported as ``_analyst_connections``).

    connection("warehouse")        a SQLAlchemy Engine (postgres, mysql, sqlite, duckdb), a boto3
                                   S3 client (s3; connection(name, "fs"): an s3fs filesystem) or
                                   an httpx.Client (http) with its base URL and secret header
    sql("warehouse", "select ...") a DataFrame of at most sql_max_rows rows, under sql_timeout
    sql("select * from sales")     DuckDB over the uploads (data/*.csv, *.parquet, *.json by stem)
    %%sql [name] [-> variable]     the same as a cell, the DataFrame its result

What is attached comes from sandboxd's egress.json (EGRESS_FILE), read on first use and again
whenever it changed: TCP kinds reach their server through a forwarder on 127.0.0.1:<ports[name]>,
s3 and http through sandboxd's proxy. Secrets stay in that file's copy here: an engine's URL
holds no password (it is handed to the driver as each connection opens), a client's header is
added as each request leaves. What connection() returns is never kept in a snapshot (sandboxd's
kernel_state asks NOT_KEPT_MODULE).

Imports nothing but the standard library as the kernel starts; drivers load on first use, and
so do the modules beside this one: connection_sql.py (sql() and %%sql) and connection_checks.py
(check() and schema(), for the worker's silent cells: JSON-ready dicts, never raising).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
import types
import weakref
from typing import Any

EGRESS_FILE_VARIABLE = "ANALYST_EGRESS_FILE"  # tests point it elsewhere
EGRESS_FILE = "/run/kernel/egress.json"
NOT_KEPT_MODULE = "__sandbox_not_kept__"  # read by sandboxd (server/snapshots/kernel_state.py)
SQL_KINDS = ("postgres", "mysql", "sqlite", "duckdb")
FILE_KINDS = ("sqlite", "duckdb")
DEFAULT_SQL_TIMEOUT = 60.0
DEFAULT_SQL_MAX_ROWS = 1_000_000
CONNECT_TIMEOUT = 10


class UnknownConnection(KeyError):
    """No connection of that name is attached to this session (a KeyError that reads as words)."""

    def __str__(self) -> str:
        return str(self.args[0])


class NotReachable(RuntimeError):
    """The connection is attached but this sandbox has no way to it (its egress is not set)."""


# ---- egress.json, read lazily ------------------------------------------------------------------

_egress: dict[str, Any] = {"key": None, "value": {}}
_egress_lock = threading.Lock()


def _read_egress() -> dict[str, Any]:
    """The egress file's content, re-read when its mtime or size changed; {} when there is none."""
    path = os.environ.get(EGRESS_FILE_VARIABLE, EGRESS_FILE)
    try:
        stat = os.stat(path)
    except OSError:
        return {}
    key = (path, stat.st_ino, stat.st_mtime_ns, stat.st_size)
    with _egress_lock:
        if _egress["key"] != key:
            with open(path, encoding="utf-8") as file:
                value = json.load(file)
            _egress.update(key=key, value=value if isinstance(value, dict) else {})
        return _egress["value"]


def _settings() -> dict[str, Any]:
    config = _read_egress().get("config")
    return config if isinstance(config, dict) else {}


def _attached() -> dict[str, dict[str, Any]]:
    connections = _settings().get("connections")
    return connections if isinstance(connections, dict) else {}


def config_of(name: str) -> dict[str, Any]:
    attached = _attached()
    if name not in attached:
        names = ", ".join(sorted(attached)) or "none"
        raise UnknownConnection(
            f"no connection named {name!r} is attached to this session (attached: {names})"
        )
    return attached[name]


def secret_of(name: str) -> str:
    return str(config_of(name).get("secret") or "")


def _port(name: str) -> int:
    port = (_read_egress().get("ports") or {}).get(name)
    if not isinstance(port, int):
        raise NotReachable(f"connection {name!r} has no way out of this sandbox yet (its egress is not set)")
    return port


def _proxy() -> str | None:
    return _read_egress().get("proxy") or None


def sql_timeout() -> float:
    return float(_settings().get("sql_timeout") or DEFAULT_SQL_TIMEOUT)


def sql_max_rows() -> int:
    return int(_settings().get("sql_max_rows") or DEFAULT_SQL_MAX_ROWS)


def workdir() -> str:
    return os.environ.get("HOME") or os.getcwd()


# ---- connection() ------------------------------------------------------------------------------

_made: dict[tuple[str, str | None], tuple[str, Any]] = {}  # (name, flavor) -> (digest, object)
_handed_out: weakref.WeakSet[Any] = weakref.WeakSet()


def connection(name: str, flavor: str | None = None) -> Any:
    """The attached connection ``name``, ready to use: a SQLAlchemy Engine for postgres, mysql,
    sqlite and duckdb (read-only sessions, statements under the session's SQL timeout, when the
    connection is read-only); a boto3 S3 client for s3 (``flavor="fs"``: an s3fs filesystem);
    an httpx.Client for http. Made once and reused until the session's connections change.

    Raises UnknownConnection (a KeyError) for a name not attached to this session."""
    config = config_of(name)
    kind = config.get("kind")
    makers = _MAKERS.get(kind) if flavor is None else _FLAVORS.get((kind, flavor))
    if makers is None:
        raise ValueError(f"connection {name!r} ({kind}) has no {flavor or 'default'!r} form")
    digest = _digest(name, config)
    made = _made.get((name, flavor))
    if made is not None and made[0] == digest:
        return made[1]
    if made is not None:
        _release(made[1])
    value = makers(name, config)
    _made[(name, flavor)] = (digest, value)
    _handed_out.add(value)
    return value


def _digest(name: str, config: dict[str, Any]) -> str:
    """What a connection object depends on: its configuration, its port, the proxy, its file."""
    egress = _read_egress()
    seen = [
        config,
        (egress.get("ports") or {}).get(name),
        egress.get("proxy"),
        (_settings().get("files") or {}).get(name),
    ]
    return hashlib.sha256(json.dumps(seen, sort_keys=True, default=str).encode()).hexdigest()


def _release(value: Any) -> None:
    with contextlib.suppress(Exception):
        (getattr(value, "dispose", None) or (lambda: None))()


def _server_url(name: str, config: dict[str, Any], driver: str) -> Any:
    """The URL as given, for ``driver``, at the forwarder's port and with no password."""
    from sqlalchemy.engine import make_url

    url = make_url(config["url"])
    return url.set(drivername=driver, port=_port(name), password=None)


def _postgres_engine(name: str, config: dict[str, Any]) -> Any:
    from sqlalchemy import create_engine, event

    # hostaddr: the forwarder; the URL's host stays libpq's name for TLS checks and the login.
    options = f"-c statement_timeout={int(sql_timeout() * 1000)}"
    if config.get("read_only", True):
        options += " -c default_transaction_read_only=on"
    engine = create_engine(
        _server_url(name, config, "postgresql+psycopg"),
        connect_args={"hostaddr": "127.0.0.1", "connect_timeout": CONNECT_TIMEOUT, "options": options},
        pool_pre_ping=True,
    )
    _password_on_connect(engine, name, event)
    return engine


def _mysql_engine(name: str, config: dict[str, Any]) -> Any:
    from sqlalchemy import create_engine, event

    timeout = sql_timeout()
    url = _server_url(name, config, "mysql+pymysql").set(host="127.0.0.1")
    # read_timeout: the client's own stop, should the server not enforce its limit.
    connect_args = {"connect_timeout": CONNECT_TIMEOUT, "read_timeout": int(timeout) + 5}
    engine = create_engine(url, connect_args=connect_args, pool_pre_ping=True)
    _password_on_connect(engine, name, event)
    read_only = config.get("read_only", True)

    @event.listens_for(engine, "connect")
    def limit_session(dbapi_connection: Any, record: Any) -> None:
        with dbapi_connection.cursor() as cursor:
            if read_only:
                cursor.execute("SET SESSION TRANSACTION READ ONLY")
            if "mariadb" in dbapi_connection.get_server_info().lower():
                cursor.execute(f"SET SESSION max_statement_time = {timeout:.3f}")
            else:
                cursor.execute(f"SET SESSION max_execution_time = {int(timeout * 1000)}")

    return engine


def _password_on_connect(engine: Any, name: str, event: Any) -> None:
    @event.listens_for(engine, "do_connect")
    def add_password(dialect: Any, record: Any, cargs: Any, cparams: dict[str, Any]) -> None:
        cparams["password"] = secret_of(name)


def _file_path(name: str) -> str:
    relative = (_settings().get("files") or {}).get(name)
    if not relative:
        raise NotReachable(f"connection {name!r} has no file in this sandbox yet")
    path = os.path.normpath(os.path.join(workdir(), relative))
    if not os.path.exists(path):
        raise FileNotFoundError(f"connection {name!r}: its file {relative} is missing")
    return path


def _sqlite_engine(name: str, config: dict[str, Any]) -> Any:
    import sqlite3
    from urllib.parse import quote

    from sqlalchemy import create_engine

    path = _file_path(name)
    mode = "ro" if config.get("read_only", True) else "rw"

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(f"file:{quote(path)}?mode={mode}", uri=True, check_same_thread=False)

    return create_engine("sqlite://", creator=connect)


def _duckdb_engine(name: str, config: dict[str, Any]) -> Any:
    from sqlalchemy import create_engine

    read_only = bool(config.get("read_only", True))
    return create_engine(f"duckdb:///{_file_path(name)}", connect_args={"read_only": read_only})


def _s3_options(name: str, config: dict[str, Any]) -> dict[str, Any]:
    options = config.get("options") or {}
    proxy = _proxy()
    return {
        "endpoint_url": options.get("endpoint_url") or None,
        "region": options.get("region") or "us-east-1",
        "key_id": options.get("key_id") or None,
        "proxies": {"http": proxy, "https": proxy} if proxy else None,
    }


def _s3_client(name: str, config: dict[str, Any]) -> Any:
    import boto3
    from botocore.config import Config

    s3 = _s3_options(name, config)
    return boto3.session.Session().client(
        "s3",
        endpoint_url=s3["endpoint_url"],
        region_name=s3["region"],
        aws_access_key_id=s3["key_id"],
        aws_secret_access_key=secret_of(name),
        config=Config(proxies=s3["proxies"], connect_timeout=CONNECT_TIMEOUT, retries={"max_attempts": 2}),
    )


def _s3_filesystem(name: str, config: dict[str, Any]) -> Any:
    import s3fs

    s3 = _s3_options(name, config)
    return s3fs.S3FileSystem(
        key=s3["key_id"],
        secret=secret_of(name),
        endpoint_url=s3["endpoint_url"],
        client_kwargs={"region_name": s3["region"]},
        config_kwargs={"proxies": s3["proxies"]} if s3["proxies"] else {},
        skip_instance_cache=True,
    )


def _http_client(name: str, config: dict[str, Any]) -> Any:
    import httpx

    options = config.get("options") or {}
    header = options.get("header") or "Authorization"
    scheme = options.get("scheme", "Bearer")

    class SecretHeader(httpx.Auth):
        """Adds the secret as each request leaves (so the client's headers never show it)."""

        def auth_flow(self, request: httpx.Request) -> Any:
            secret = secret_of(name)
            request.headers[header] = f"{scheme} {secret}" if scheme else secret
            yield request

    return httpx.Client(base_url=config["url"], auth=SecretHeader(), proxy=_proxy(), timeout=sql_timeout())


_MAKERS = {
    "postgres": _postgres_engine,
    "mysql": _mysql_engine,
    "sqlite": _sqlite_engine,
    "duckdb": _duckdb_engine,
    "s3": _s3_client,
    "http": _http_client,
}
_FLAVORS = {("s3", "fs"): _s3_filesystem}


def not_kept(value: Any) -> str | None:
    """Why ``value`` is left out of a snapshot (something connection() made), or None."""
    try:
        made = value in _handed_out
    except TypeError:
        return None
    return "a connection: not kept; call connection() again" if made else None


# The last results sql() gave in the cell that runs, under names sandboxd's inspection can read:
# after each cell of a schema-mode session the worker reads them (analyst/trust/kernel_values.py)
# as it reads the namespace's tables, so rows a cell printed without keeping them
# (print(sql(...))) are withheld from the model too. Hidden from the variables list and from
# snapshots (user_ns_hidden), dropped as the next cell starts.
CELL_RESULT_NAMES = tuple(f"_analyst_sql_{n}" for n in range(1, 6))  # the newest first
_cell_results: list[Any] = []
_shells: list[Any] = []  # the kernel's shell, once register() ran


def _keep_for_inspection(result: Any) -> None:
    if not _shells:
        return
    shell = _shells[0]
    _cell_results.insert(0, result)
    del _cell_results[len(CELL_RESULT_NAMES) :]
    for name, value in zip(CELL_RESULT_NAMES, _cell_results, strict=False):
        shell.user_ns[name] = shell.user_ns_hidden[name] = value


def forget_cell_results(*_: Any) -> None:
    _cell_results.clear()
    for shell in _shells:
        for name in CELL_RESULT_NAMES:
            shell.user_ns.pop(name, None)
            shell.user_ns_hidden.pop(name, None)


def register(shell: Any) -> None:
    """Give ``shell`` the %%sql magic, the session's env applied before each cell, and name what
    connection() made to sandboxd's snapshots as not kept."""
    _shells[:] = [shell]

    def sql_magic(line: str, cell: str) -> Any:
        """%%sql [connection] [-> variable]: the cell's SQL, its DataFrame the cell's result."""
        __tracebackhide__ = True
        name, variable = _part("sql").parse_magic_line(line)
        frame = sql(name, cell)
        if variable:
            shell.user_ns[variable] = frame
        return frame

    shell.register_magic_function(sql_magic, "cell", "sql")
    shell.events.register("pre_run_cell", apply_env)
    shell.events.register("pre_run_cell", forget_cell_results)  # a silent inspection does not run it
    hook = types.ModuleType(NOT_KEPT_MODULE)
    hook.reason = not_kept  # type: ignore[attr-defined]
    sys.modules[NOT_KEPT_MODULE] = hook


def sql(name_or_query: str | None, query: str | None = None, /, **params: Any) -> Any:
    """A query's result as a pandas DataFrame: ``sql(name, query)`` on an attached database,
    ``sql(query)`` (or ``sql(None, query)``) in DuckDB over the uploaded files, each table file
    a view by its name without extension. ``params`` bind ``:name`` placeholders (DuckDB:
    ``$name``). At most the session's sql_max_rows rows are fetched (a notice on stderr says
    when a result was cut), within its sql_timeout seconds; a read-only connection refuses writes.

    Raises UnknownConnection (a KeyError) for a name not attached to this session."""
    __tracebackhide__ = True
    result = _part("sql").sql(name_or_query, query, **params)
    _keep_for_inspection(result)
    return result


def check(name: str) -> dict[str, Any]:
    """``{"ok": true, "server", "schema"}`` once the connection answered, or ``{"ok": false,
    "category", "message"}``: category auth, tls, timeout, refused, not_found or other."""
    return _part("checks").check(name)


def schema(name: str) -> dict[str, Any]:
    """The connection's tables (bounded), or for s3 its first objects."""
    return _part("checks").schema(name)


def _part(topic: str) -> types.ModuleType:
    """connection_<topic>.py, beside this file, loaded on first use."""
    qualified = f"{__name__}_{topic}"
    module = sys.modules.get(qualified)
    if module is None:
        from importlib.util import module_from_spec, spec_from_file_location

        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"connection_{topic}.py")
        spec = spec_from_file_location(qualified, path)
        module = module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[qualified] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


# ---- the session's environment -------------------------------------------------------------------

_applied_env: set[str] = set()


def apply_env(*_: Any) -> None:
    """Set the session's secrets (config["env"]) in os.environ; remove those no longer given."""
    try:
        env = _settings().get("env") or {}
    except (OSError, ValueError):
        return
    env = {str(key): str(value) for key, value in env.items()} if isinstance(env, dict) else {}
    for key in _applied_env - set(env):
        os.environ.pop(key, None)
    os.environ.update(env)
    _applied_env.clear()
    _applied_env.update(env)
