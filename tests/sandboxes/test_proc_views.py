"""What /proc tells a kernel under bubblewrap: no host path in its mount table, and its own memory.

mountinfo names each mount's source folder as a path inside its filesystem: a bind mount of the
template under the checkout showed that path, the interpreter under /root, the runtime folder
under /tmp, and a tmpfs mounted with uid= the host uid. /proc/meminfo showed the host's memory,
which libraries size themselves from.

bubblewrap's own tmpfs mounts (/, /dev, /tmp, and the files it places, such as /etc/passwd)
carried the host uid it runs as (the kernel prints a tmpfs's owner in the host's terms, and
bubblewrap mounts them unprivileged); they are folders of a tmpfs sandboxd mounts now
(sandboxes/drivers/scaffold.py), and no line of the table names that uid.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from tests.sandboxes.bwrap_service import needs_root
from tests.sandboxes.test_escape import MEMORY_LIMIT, PROJECT_ROOT, host_pids_in, pid_namespace_of, probe

pytestmark = [pytest.mark.escape, needs_root]

READ_VIEWS = """
views = {}
for name in ('/proc/self/mountinfo', '/proc/mounts', '/proc/self/mounts', '/proc/meminfo'):
    with open(name) as f:
        views[name] = f.read()
observed = views
"""


def host_uid(sandbox) -> int:
    [uid] = {
        int(line.split()[1])
        for pid in host_pids_in(pid_namespace_of(sandbox))
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("Uid:")
    }
    return uid


def test_the_mount_table_names_no_host_path(bwrap_sandboxd, make_bwrap_sandbox):
    sandbox = make_bwrap_sandbox()
    views = probe(sandbox, READ_VIEWS)
    uid = host_uid(sandbox)
    host_paths = [str(PROJECT_ROOT), "/root", str(bwrap_sandboxd.data_dir), "/tmp/", "/work"]
    for name in ("/proc/self/mountinfo", "/proc/mounts", "/proc/self/mounts"):
        table = views[name]
        assert "/opt/template" in table and "/home/user" in table  # the table is really there
        for path in host_paths:
            assert path not in table, f"{path} shows in {name}:\n{table}"
        assert not re.search(rf"\b{uid}\b", table), f"the host uid {uid} shows in {name}:\n{table}"

    # The interpreter, seen at /opt/python, is the template's own, its libpython included (a
    # shared build's RUNPATH names the host path; the system's libpython would be taken instead).
    interpreter = probe(
        sandbox,
        "import platform, sys\n"
        "libs = {line.split()[-1] for line in open('/proc/self/maps') if 'libpython' in line}\n"
        "observed = [sys.base_prefix, sys.executable, platform.python_version(), sorted(libs)]",
    )
    config = (Path(settings.SANDBOXD_TEMPLATES_DIR) / "code-interpreter" / "venv" / "pyvenv.cfg").read_text()
    [version] = [line.split("=")[1].strip() for line in config.splitlines() if line.startswith("version")]
    assert interpreter[:3] == ["/opt/python", "/opt/template/venv/bin/python", version], interpreter
    assert all(lib.startswith("/opt/python/") for lib in interpreter[3]), interpreter


def test_meminfo_is_the_sandboxs_memory_not_the_hosts(make_bwrap_sandbox):
    views = probe(make_bwrap_sandbox(), READ_VIEWS)
    figures = {
        name: int(value.split()[0]) * 1024
        for name, value in (line.split(":", 1) for line in views["/proc/meminfo"].splitlines())
        if value.strip().endswith("kB")
    }
    host_total = int(Path("/proc/meminfo").read_text().split()[1]) * 1024
    assert host_total > MEMORY_LIMIT  # else the test proves nothing
    assert figures["MemTotal"] == MEMORY_LIMIT
    assert 0 < figures["MemAvailable"] <= MEMORY_LIMIT
    assert 0 < figures["MemFree"] <= MEMORY_LIMIT
    assert figures["SwapTotal"] == 0


def test_terminals_are_the_sandboxs_own_and_bounded(make_bwrap_sandbox):
    """IPython's `!cmd` runs in a pseudo-terminal: the sandbox has a devpts instance of its own
    (none of the host's terminals in it), which holds at most 64."""
    observed = probe(
        make_bwrap_sandbox(),
        """
        import errno, os
        before = sorted(os.listdir('/dev/pts'))
        opened = []
        try:
            for _ in range(100):
                opened.append(os.openpty())
        except OSError as exc:
            failure = errno.errorcode[exc.errno]
        listed = len(os.listdir('/dev/pts'))
        for pair in opened:
            os.close(pair[0])
            os.close(pair[1])
        observed = {'before': before, 'opened': len(opened), 'failure': failure, 'listed': listed}
        """,
    )
    assert observed == {"before": ["ptmx"], "opened": 64, "failure": "ENOSPC", "listed": 65}, observed
