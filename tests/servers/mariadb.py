"""A private MariaDB server (Debian's mariadbd) in a temporary folder, on a free loopback port."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from tests.sandboxd_process import free_port
from tests.servers.database import ORDER_ROWS, Database

MARIADBD = "/usr/sbin/mariadbd"
START_TIMEOUT = 60.0
USER, PASSWORD, DATABASE = "analyst", "maria-secret-7d1f", "shop"


@contextlib.contextmanager
def mariadb_server() -> Iterator[Database]:
    """A running server with database ``shop`` (its ``orders`` table filled) owned by a user who
    logs in with a password over TCP; the server and its files are gone afterwards."""
    if not Path(MARIADBD).exists():
        raise RuntimeError(f"{MARIADBD} is missing: install Debian's mariadb-server")
    folder = Path(tempfile.mkdtemp(prefix="mariadb-test-"))
    socket_path = folder / "mariadb.sock"
    as_root = ["--user=root"] if os.geteuid() == 0 else []
    data = folder / "data"
    subprocess.run(
        [
            "mariadb-install-db",
            "--no-defaults",
            f"--datadir={data}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            *as_root,
        ],
        check=True,
        capture_output=True,
    )
    port = free_port()
    server = subprocess.Popen(
        [
            MARIADBD,
            "--no-defaults",
            f"--datadir={data}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            f"--socket={socket_path}",
            f"--pid-file={folder / 'mariadb.pid'}",
            f"--log-error={folder / 'error.log'}",
            "--skip-name-resolve",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=16M",
            *as_root,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_up(server, socket_path, folder / "error.log")
        _run_sql(socket_path, _setup_sql())
        yield Database(host="127.0.0.1", port=port, user=USER, password=PASSWORD, database=DATABASE)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _setup_sql() -> str:
    rows = ", ".join(f"({i}, 'customer {i % 7}', {i * 1.5})" for i in range(1, ORDER_ROWS + 1))
    return f"""
        CREATE DATABASE {DATABASE};
        CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}';
        GRANT ALL PRIVILEGES ON {DATABASE}.* TO '{USER}'@'%';
        CREATE TABLE {DATABASE}.orders (id INTEGER PRIMARY KEY, customer VARCHAR(50), amount DECIMAL(10, 2));
        INSERT INTO {DATABASE}.orders VALUES {rows};
    """


def _run_sql(socket_path: Path, sql: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["mariadb", "--no-defaults", "-uroot", f"--socket={socket_path}", "-e", sql],
        check=True,
        capture_output=True,
        text=True,
    )


def _wait_until_up(server: subprocess.Popen[bytes], socket_path: Path, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(
                f"mariadbd exited ({server.returncode}): {log.read_text(errors='replace')[-2000:]}"
            )
        if socket_path.exists():
            with contextlib.suppress(subprocess.CalledProcessError):
                _run_sql(socket_path, "SELECT 1")
                return
        time.sleep(0.1)
    raise RuntimeError(f"mariadbd did not start within {START_TIMEOUT} s")
