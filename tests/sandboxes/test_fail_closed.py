"""sandboxd refuses to start, saying what to install, when no isolation driver works."""

import os
import subprocess
import sys

import pytest

from tests.sandboxd_process import ROOT, free_port

BROKEN_TOOL = "#!/bin/sh\necho 'setting up uid map: Permission denied' >&2\nexit 1\n"


@pytest.fixture
def broken_isolation_path(tmp_path):
    """A PATH whose bwrap and runsc exist but cannot create sandboxes (as on a locked-down host)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bwrap", "runsc"):
        tool = bin_dir / name
        tool.write_text(BROKEN_TOOL)
        tool.chmod(0o755)
    return f"{bin_dir}:{os.environ['PATH']}"


def run_sandboxd(tmp_path, **env):
    environment = dict(os.environ)
    environment.update(
        SANDBOXD_URL=f"http://127.0.0.1:{free_port()}",
        SANDBOXD_TOKEN="t",
        SANDBOXD_DATA_DIR=str(tmp_path / "data"),
        SANDBOXD_POOL_SIZE="0",
        **env,
    )
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "sandboxd"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_no_working_driver_means_no_service(tmp_path, broken_isolation_path):
    done = run_sandboxd(tmp_path, PATH=broken_isolation_path)
    assert done.returncode == 2
    assert "sandboxd will not start" in done.stderr
    assert "no isolation driver works" in done.stderr
    assert "apt-get install bubblewrap" in done.stderr
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("*"))


def test_a_chosen_driver_that_fails_is_not_replaced(tmp_path, broken_isolation_path):
    done = run_sandboxd(tmp_path, PATH=broken_isolation_path, SANDBOXD_DRIVER="bwrap")
    assert done.returncode == 2
    assert "bwrap could not start a sandbox" in done.stderr


def test_an_unknown_driver_is_refused(tmp_path):
    done = run_sandboxd(tmp_path, SANDBOXD_DRIVER="none")
    assert done.returncode == 2
    assert "unknown isolation driver 'none'" in done.stderr
