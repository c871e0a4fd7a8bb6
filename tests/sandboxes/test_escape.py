"""Escape attempts against the default isolation driver: each attack must fail inside the sandbox.

Every test runs a hostile cell, asserts precisely what the code inside observed (so the test
fails the day isolation breaks), then proves sandboxd survived with ``service_still_serves``.
Where an attack could pass vacuously, the host first shows that the target is really there.
Attacks are bounded and never change the host: writes to host kernel settings are probed by
opening for write only, and all load stays inside the sandbox or on loopback.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import socket
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings

from sandboxes import Execution, FileNotFound, InvalidPath, QuotaExceeded, Sandbox
from tests.conftest import TEST_SETTINGS, workdir_of

pytestmark = pytest.mark.escape

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20


def _size(text: str) -> int:
    """'64M' -> bytes, as the settings read SANDBOXD_*_LIMIT."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


DISK_QUOTA = _size(TEST_SETTINGS["SANDBOXD_DISK_LIMIT"])
MEMORY_LIMIT = _size(TEST_SETTINGS["SANDBOXD_MEMORY_LIMIT"])
OUTPUT_LIMIT = _size(TEST_SETTINGS["SANDBOXD_STDOUT_LIMIT"])
PROCESS_LIMIT = int(TEST_SETTINGS["SANDBOXD_PROCESS_LIMIT"])
SECRET_NAMES = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|DATABASE|REDIS|SANDBOXD|DJANGO|_URL$|AWS_")
# Variables the kernel sets itself to values that may equal the host's by coincidence.
BENIGN_SAME_VALUE = frozenset(
    "LANG LC_ALL LC_CTYPE TERM PAGER GIT_PAGER CLICOLOR CLICOLOR_FORCE FORCE_COLOR TMPDIR SHLVL"
    " PYTHONDONTWRITEBYTECODE".split()
)


def probe(target: Sandbox, code: str, **options: object) -> object:
    """Run ``code`` (which ends by binding ``observed``) and return ``observed`` as JSON data."""
    cell = textwrap.dedent(code) + "\nimport json as _json\nprint('OBSERVED=' + _json.dumps(observed))\n"
    execution = target.run_code(cell, timeout=120, **options)  # type: ignore[arg-type]
    assert execution.error is None, f"{execution.error}\n{execution.error.traceback}\n{execution.stderr}"
    [line] = [line for line in execution.stdout.splitlines() if line.startswith("OBSERVED=")]
    return json.loads(line.removeprefix("OBSERVED="))


def run(target: Sandbox, code: str, **options: object) -> Execution:
    return target.run_code(textwrap.dedent(code), **options)  # type: ignore[arg-type]


def host_pids_in(pid_namespace: str) -> list[int]:
    """Host pids of every process in ``pid_namespace`` (as /proc/<pid>/ns/pid reads)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == pid_namespace:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def wait_until(condition: Callable[[], bool], seconds: float = 15.0) -> bool:
    """Poll ``condition`` for a bounded while (process exit is asynchronous); its last answer."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def pid_namespace_of(target: Sandbox) -> str:
    namespace = probe(target, "import os\nobserved = os.readlink('/proc/self/ns/pid')")
    assert isinstance(namespace, str) and namespace != os.readlink("/proc/self/ns/pid")
    return namespace


@pytest.fixture
def kernel_processes() -> Callable[[Sandbox], Callable[[], list[int]]]:
    """kernel_processes(sandbox): a callable giving the host pids of the kernel ``sandbox`` runs now,
    for as long as it lives (bubblewrap: its pid namespace; test_escape_under_gvisor.py: its Sentry)."""

    def of(target: Sandbox) -> Callable[[], list[int]]:
        namespace = pid_namespace_of(target)
        return lambda: host_pids_in(namespace)

    return of


def reachable_from_host(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3):
            return True
    except OSError:
        return False


# 1. The host's files ---------------------------------------------------------------------------


def test_host_files_are_not_visible(sandbox, sandboxd, service_still_serves):
    secrets_on_host = [
        Path("/etc/shadow"),
        PROJECT_ROOT / "config" / "settings.py",
        PROJECT_ROOT / "manage.py",
        Path(__file__).resolve(),
        sandboxd.log_path,
        sandboxd.data_dir / "sandboxes",
    ]
    secrets_on_host += [
        p for p in (PROJECT_ROOT / ".env", Path("/etc/hostname"), Path("/root/.bash_history")) if p.exists()
    ]
    for path in secrets_on_host:
        assert path.exists(), f"{path} should exist on the host for this test to mean anything"

    observed = probe(
        sandbox,
        f"""
        import os, sys
        outcomes = {{}}
        for path in {[str(p) for p in secrets_on_host]!r}:
            try:
                if os.path.isdir(path):
                    outcomes[path] = 'LISTED: ' + repr(sorted(os.listdir(path))[:5])
                else:
                    with open(path, 'rb') as f:
                        outcomes[path] = 'READ: ' + repr(f.read(40))
            except OSError as exc:
                outcomes[path] = type(exc).__name__
        # Walk the whole tree but the system folders: every file found must be the template
        # runtime (the template and the interpreter it was built from), the kernel's own
        # connection folder, the sandbox's workdir, or one of a few identity files in /etc.
        from ipykernel.connect import get_connection_file
        allowed = [os.path.dirname(os.path.realpath(sys.prefix)), os.path.realpath(sys.base_prefix),
                   os.path.realpath(os.getcwd()), os.path.dirname(get_connection_file())]
        allowed += ['/etc/' + name for name in ('passwd', 'group', 'hosts', 'localtime', 'ld.so.cache',
                                                'nsswitch.conf', 'resolv.conf')]
        def allowed_path(path):
            return any(path == a or path.startswith(a + '/') for a in allowed)
        system = {{'/proc', '/sys', '/dev', '/usr', '/tmp', '/bin', '/sbin', '/lib', '/lib32', '/lib64',
                  '/libx32'}}
        stray = []
        for folder, dirs, files in os.walk('/'):
            dirs[:] = [d for d in dirs if os.path.join(folder, d) not in system
                       and not allowed_path(os.path.join(folder, d))]
            stray += [os.path.join(folder, f) for f in files if not allowed_path(os.path.join(folder, f))]
        observed = {{'outcomes': outcomes, 'stray': sorted(stray)[:20], 'home': sorted(os.listdir('/home'))}}
    """,
    )
    assert isinstance(observed, dict)
    leaked = {
        path: how
        for path, how in observed["outcomes"].items()
        if how not in ("FileNotFoundError", "PermissionError")
    }
    assert leaked == {}, f"host files visible inside the sandbox: {leaked}"
    assert observed["stray"] == [], "host files outside the template runtime are visible"
    assert observed["home"] == ["user"]
    service_still_serves()


# 2. The web app's environment ------------------------------------------------------------------


def test_host_environment_is_not_inherited(sandbox, sandboxd, service_still_serves):
    assert sandboxd.process is not None
    raw = Path(f"/proc/{sandboxd.process.pid}/environ").read_bytes()
    host_env = dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)
    assert host_env["SANDBOXD_TOKEN"] == sandboxd.token  # the canary really is in sandboxd's environment

    observed = probe(
        sandbox,
        """
        import os
        processes = {}
        for pid in os.listdir('/proc'):
            if pid.isdigit():
                entry = {}
                for what in ('environ', 'cmdline'):
                    try:
                        with open(f'/proc/{pid}/{what}', 'rb') as f:
                            entry[what] = f.read().decode('utf-8', 'replace')
                    except OSError as exc:
                        entry[what] = '<' + type(exc).__name__ + '>'
                processes[pid] = entry
        observed = {'environ': dict(os.environ), 'processes': processes}
    """,
    )
    assert isinstance(observed, dict)
    kernel_env: dict[str, str] = observed["environ"]
    dumped = json.dumps(observed)
    assert sandboxd.token not in dumped, "the sandboxd token is readable inside the sandbox"
    assert str(settings.BASE_DIR) not in dumped, "the project's host path shows inside the sandbox"
    assert [name for name in kernel_env if SECRET_NAMES.search(name)] == []
    passed_on_purpose = set(settings.SANDBOXD_KERNEL_ENV)  # documented in config/settings.py
    same = {
        name
        for name, value in host_env.items()
        if kernel_env.get(name) == value and name not in BENIGN_SAME_VALUE | passed_on_purpose
    }
    assert same == set(), f"host variables passed through to the kernel: {sorted(same)}"
    distinctive = {
        value
        for name, value in host_env.items()
        if len(value) >= 12 and name not in BENIGN_SAME_VALUE | passed_on_purpose
    }
    in_proc = sorted(v for v in distinctive for p in observed["processes"].values() if v in p["environ"])
    assert in_proc == [], "host environment values appear in /proc/*/environ inside"
    assert kernel_env["PATH"] != host_env.get("PATH")
    assert kernel_env["HOME"] == "/home/user"
    service_still_serves()


# 3. Services on the host's loopback ------------------------------------------------------------


def test_host_loopback_services_are_unreachable(sandbox, sandboxd, service_still_serves):
    targets = {"redis": 6379, "postgres": 5432, "sandboxd": sandboxd.port}
    for name, port in targets.items():
        assert reachable_from_host(port), f"{name} on 127.0.0.1:{port} must be up on the host for this test"
    unix_sockets = [
        p
        for p in (
            "/var/run/postgresql/.s.PGSQL.5432",
            "/run/postgresql/.s.PGSQL.5432",
            "/var/run/redis/redis-server.sock",
            "/var/run/docker.sock",
        )
        if os.path.exists(p)
    ]

    observed = probe(
        sandbox,
        f"""
        import errno, socket
        outcomes = {{}}
        for name, port in {targets!r}.items():
            for host in ('127.0.0.1', 'localhost', '::1'):
                try:
                    with socket.create_connection((host, port), timeout=3):
                        outcomes[f'{{name}}@{{host}}'] = 'CONNECTED'
                except OSError as exc:
                    outcomes[f'{{name}}@{{host}}'] = errno.errorcode.get(exc.errno, type(exc).__name__)
        for path in {unix_sockets!r}:
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(path)
                outcomes[path] = 'CONNECTED'
            except OSError as exc:
                outcomes[path] = errno.errorcode.get(exc.errno, type(exc).__name__)
            finally:
                s.close()
        observed = outcomes
    """,
    )
    assert isinstance(observed, dict)
    connected = sorted(k for k, v in observed.items() if v == "CONNECTED")
    assert connected == [], f"host services reachable from inside: {connected}"
    for key, outcome in observed.items():
        if key.startswith("/"):
            assert outcome == "ENOENT", (key, outcome)
        else:
            assert outcome in {"ECONNREFUSED", "EADDRNOTAVAIL", "ENETUNREACH"}, (key, outcome)
    service_still_serves()


# 4. The outside world --------------------------------------------------------------------------


def test_no_network_egress(sandbox, service_still_serves):
    """Read, never tried: the sandbox's interfaces, addresses and routes say that no packet can
    leave it. (A test here sends nothing past loopback, not even to see it refused.)"""
    host_interfaces = [name for _, name in socket.if_nameindex()]
    assert any(name != "lo" for name in host_interfaces), "the host needs a real interface to compare with"

    observed = probe(
        sandbox,
        """
        import errno, os, socket
        def lines(path, skip=0):  # a table of /proc/net as split lines; none where it is absent
            if not os.path.exists(path):
                return []
            with open(path) as f:
                return [line.split() for line in f.readlines()[skip:]]
        try:  # netlink: refused by bubblewrap's seccomp filter (test_seccomp.py)
            interfaces = [n for _, n in socket.if_nameindex()]
        except OSError as exc:
            interfaces = errno.errorcode[exc.errno]
        observed = {
            'if_nameindex': interfaces,
            'proc_net_dev': [line[0].rstrip(':') for line in lines('/proc/net/dev', 2)],
            'routes': lines('/proc/net/route', 1),
            'ipv6_routes': lines('/proc/net/ipv6_route'),
            'ipv6_addresses': lines('/proc/net/if_inet6'),
            'local_ipv4': [line[1] for line in lines('/proc/net/fib_trie') if line[:1] == ['|--']],
        }
    """,
    )
    assert isinstance(observed, dict)
    assert observed["if_nameindex"] in (["lo"], errno.errorcode[errno.EOPNOTSUPP])
    assert observed["proc_net_dev"] == ["lo"]
    assert observed["routes"] == [], "an IPv4 route out of the sandbox"
    # Routes and addresses, where the kernel keeps these tables (gVisor has no fib_trie): the
    # loopback's alone.
    assert all(route[-1] == "lo" for route in observed["ipv6_routes"]), observed["ipv6_routes"]
    assert all(address[-1] == "lo" for address in observed["ipv6_addresses"]), observed["ipv6_addresses"]
    assert all(address.startswith("127.") for address in observed["local_ipv4"]), observed["local_ipv4"]
    service_still_serves()


# 5. Fork bomb -----------------------------------------------------------------------------------


# Forks until refused, each child sleeping; then ends them all. Binds ``observed``.
FORK_BOMB = """
import errno, os, signal, time
children, failure = [], None
for _ in range(1000):
    try:
        pid = os.fork()
    except OSError as exc:
        failure = exc
        break
    if pid == 0:
        try:
            time.sleep(120)
        finally:
            os._exit(0)
    children.append(pid)
for pid in children:
    os.kill(pid, signal.SIGKILL)
for pid in children:
    os.waitpid(pid, 0)
observed = {'forks': len(children), 'error': type(failure).__name__,
            'errno': errno.errorcode.get(getattr(failure, 'errno', None))}
"""


def test_fork_bomb_hits_the_process_limit(sandbox, service_still_serves):
    observed = probe(sandbox, FORK_BOMB)
    assert isinstance(observed, dict)
    assert 0 < observed["forks"] < min(200, PROCESS_LIMIT), observed
    assert observed["error"] == "BlockingIOError" and observed["errno"] == "EAGAIN", observed
    assert sandbox.run_code("6 * 7").text == "42"
    service_still_serves()


# 6. Memory bomb ---------------------------------------------------------------------------------


def test_memory_bomb_is_stopped_and_the_context_recovers(sandbox, service_still_serves):
    execution = run(
        sandbox,
        """
        chunks = []
        for _ in range(64):  # 64 x 64 MiB = 4 GiB, every page written
            chunks.append(b'\\x01' * (64 << 20))
        print('allocated', len(chunks) * 64, 'MiB')
    """,
        timeout=120,
    )
    assert execution.error is not None, f"4 GiB allocated under a 1 GiB limit: {execution.stdout}"
    assert execution.error.name in ("MemoryError", "KernelDied"), execution.error
    if execution.error.name == "KernelDied":
        assert "restarted" in execution.error.value
    assert "allocated" not in execution.stdout
    assert sandbox.run_code("6 * 7").text == "42"
    service_still_serves()


# 7. Disk fill -----------------------------------------------------------------------------------


def test_disk_fill_stops_at_the_quota(sandbox, sandboxd, service_still_serves):
    observed = probe(
        sandbox,
        """
        import errno, os
        written, failure, chunk = 0, None, b'\\0' * (1 << 20)
        os.makedirs('fill', exist_ok=True)
        try:
            for index in range(32):  # files of 8 MiB each (under any per-file limit), 256 MiB at most
                with open(f'fill/{index}.bin', 'wb', buffering=0) as f:
                    for _ in range(8):
                        written += f.write(chunk)
        except OSError as exc:
            failure = exc
        observed = {'written': written, 'error': type(failure).__name__,
                    'errno': errno.errorcode.get(getattr(failure, 'errno', None))}
    """,
    )
    assert isinstance(observed, dict)
    assert observed["errno"] in ("ENOSPC", "EDQUOT", "EFBIG"), observed
    assert 48 * MIB <= observed["written"] <= DISK_QUOTA + MIB, observed

    workdir = workdir_of(sandboxd, sandbox)
    assert os.path.ismount(workdir), "the workdir is not its own filesystem: writes land on the host's disk"
    assert os.stat(workdir).st_dev != os.stat(sandboxd.data_dir).st_dev
    stats = os.statvfs(workdir)
    assert stats.f_blocks * stats.f_frsize <= DISK_QUOTA
    on_host = sum(f.stat().st_size for f in (workdir / "fill").iterdir())
    assert on_host == observed["written"]
    with pytest.raises(QuotaExceeded):
        sandbox.files.write("more.bin", b"\0" * MIB)
    service_still_serves()


# 8. Spinning forever ----------------------------------------------------------------------------


def test_infinite_loop_is_interrupted_and_state_kept(sandbox, service_still_serves):
    sandbox.run_code("kept = 'yes'")
    execution = sandbox.run_code("while True:\n    pass", timeout=2)
    assert execution.error is not None and execution.error.name == "TimeoutError", execution.error
    assert "interrupted" in execution.error.value
    assert sandbox.run_code("kept").text == "'yes'"
    service_still_serves()


def test_loop_ignoring_sigint_gets_the_kernel_restarted(sandbox, kernel_processes, service_still_serves):
    spinning_kernel = kernel_processes(sandbox)
    assert spinning_kernel(), "the kernel's processes should be visible from the host"
    sandbox.run_code("lost = 'yes'")
    execution = sandbox.run_code(
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass", timeout=2
    )
    assert execution.error is not None and execution.error.name == "TimeoutError", execution.error
    assert "restarted" in execution.error.value
    assert sandbox.run_code("lost").error.name == "NameError"
    assert wait_until(lambda: spinning_kernel() == []), "the spinning kernel outlived its restart"
    service_still_serves()


# 9. Other sandboxes -----------------------------------------------------------------------------

SEARCH_FOR_MARKER = """
    import os
    marker = {marker!r}
    files, processes, via_proc = [], [], []
    for folder, dirs, names in os.walk('/', onerror=lambda exc: None):
        if folder == '/':
            dirs[:] = [d for d in dirs if d not in ('proc', 'sys')]
        files += [os.path.join(folder, n) for n in names + dirs if marker in n]
    pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
    for pid in pids:
        try:
            with open(f'/proc/{{pid}}/cmdline', 'rb') as f:
                cmdline = f.read().decode('utf-8', 'replace')
        except OSError:
            continue
        if marker in cmdline or {other_id!r} in cmdline:
            processes.append(pid)
        for link in ('cwd', 'root/home/user'):
            try:
                if any(marker in n for n in os.listdir(f'/proc/{{pid}}/{{link}}')):
                    via_proc.append(f'{{pid}}/{{link}}')
            except OSError:
                pass
    observed = {{'files': files, 'processes': processes, 'via_proc': via_proc, 'pids': pids,
                'host_path_visible': os.path.exists({host_path!r})}}
"""


def test_other_sandboxes_files_and_processes_are_invisible(make_sandbox, sandboxd, service_still_serves):
    a, b = make_sandbox(), make_sandbox()
    marker = f"marker-{secrets.token_hex(8)}"
    run(
        a,
        f"""
        import subprocess, sys
        secret_variable = {marker!r}
        open({marker + ".txt"!r}, 'w').write('private to A')
        sleeper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {marker!r}])
    """,
    )
    search = textwrap.dedent(SEARCH_FOR_MARKER).format(
        marker=marker, other_id=a.sandbox_id, host_path=str(workdir_of(sandboxd, a))
    )
    seen_by_a = probe(a, search)
    assert isinstance(seen_by_a, dict)  # the search works: A finds its own file and process
    assert f"/home/user/{marker}.txt" in seen_by_a["files"] and seen_by_a["processes"], seen_by_a

    seen_by_b = probe(b, search)
    assert isinstance(seen_by_b, dict)
    assert seen_by_b["files"] == [], "B finds A's files"
    assert seen_by_b["processes"] == [], "B sees A's processes"
    assert seen_by_b["via_proc"] == [], "B reaches A's workdir through /proc"
    assert seen_by_b["host_path_visible"] is False
    assert len(seen_by_b["pids"]) <= 3, f"B sees more processes than its own: {seen_by_b['pids']}"
    assert b.run_code("secret_variable").error.name == "NameError"
    assert a.run_code("secret_variable").text == repr(marker)
    service_still_serves()


def test_cannot_signal_or_trace_processes_outside(
    make_sandbox, sandboxd, kernel_processes, service_still_serves
):
    a, b = make_sandbox(), make_sandbox()
    a.run_code("survivor = 'alive'")
    a_pids = kernel_processes(a)()
    assert sandboxd.process is not None and a_pids
    outside = {"sandboxd": sandboxd.process.pid, "test runner": os.getpid(), "sandbox A": max(a_pids)}
    observed = probe(
        b,
        f"""
        import ctypes, errno, os, signal
        libc = ctypes.CDLL(None, use_errno=True)
        PTRACE_ATTACH = 16
        mine = {{int(p) for p in os.listdir('/proc') if p.isdigit()}}
        outcomes = {{}}
        for name, pid in {outside!r}.items():
            if pid in mine:
                outcomes[name] = 'PID NUMBER IS USED INSIDE'
                continue
            try:
                os.kill(pid, 0)
                outcomes[name] = 'SIGNALLED'
            except OSError as exc:
                outcomes[name] = errno.errorcode[exc.errno]
            ctypes.set_errno(0)
            if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
                outcomes[name + ' ptrace'] = 'ATTACHED'
            else:
                outcomes[name + ' ptrace'] = errno.errorcode.get(ctypes.get_errno())
        try:  # everything this process may signal, as a hostile model would
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        observed = outcomes
    """,
    )
    assert isinstance(observed, dict)
    signals = {k: v for k, v in observed.items() if not k.endswith(" ptrace")}
    traces = {k: v for k, v in observed.items() if k.endswith(" ptrace")}
    assert all(v in ("ESRCH", "PID NUMBER IS USED INSIDE") for v in signals.values()), observed
    # EPERM: bubblewrap's seccomp filter refuses ptrace outright (test_seccomp.py).
    assert all(v in ("ESRCH", "EPERM", "PID NUMBER IS USED INSIDE") for v in traces.values()), observed
    assert sum(v == "ESRCH" for v in signals.values()) >= 2, observed
    assert a.run_code("survivor").text == "'alive'"
    service_still_serves()


def test_detached_background_process_dies_with_the_sandbox(
    make_sandbox, kernel_processes, service_still_serves
):
    sandbox = make_sandbox()
    processes = kernel_processes(sandbox)
    execution = run(
        sandbox,
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                try:
                    time.sleep(600)
                finally:
                    os._exit(0)
            os._exit(0)
        os.wait()
    """,
    )
    assert execution.error is None
    assert len(processes()) >= 3, "the daemon should be running before the kill"
    sandbox.kill()
    assert wait_until(lambda: processes() == []), f"processes outlived their sandbox: {processes()}"
    service_still_serves()


# 10. Root, privileges and the kernel's own settings ---------------------------------------------


def test_code_runs_without_root_or_capabilities(sandbox, service_still_serves):
    observed = probe(
        sandbox,
        """
        import ctypes, os
        PR_GET_NO_NEW_PRIVS = 39
        with open('/proc/self/status') as f:
            status = dict(line.split(':', 1) for line in f if ':' in line)
        observed = {'uid': os.getuid(), 'euid': os.geteuid(), 'gid': os.getgid(), 'egid': os.getegid(),
                    'groups': os.getgroups(), 'CapEff': status['CapEff'].strip(),
                    'CapPrm': status['CapPrm'].strip(), 'CapBnd': status['CapBnd'].strip(),
                    'NoNewPrivs': ctypes.CDLL(None).prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)}
    """,
    )
    assert isinstance(observed, dict)
    assert observed["uid"] != 0 and observed["euid"] != 0, observed
    assert observed["gid"] != 0 and observed["egid"] != 0 and 0 not in observed["groups"], observed
    assert int(observed["CapEff"], 16) == 0 and int(observed["CapPrm"], 16) == 0, observed
    assert int(observed["CapBnd"], 16) == 0, observed
    assert observed["NoNewPrivs"] == 1
    service_still_serves()


def test_sandbox_user_is_not_root_on_the_host(sandbox, service_still_serves):
    """uid 1000 inside must not be uid 0 outside, or the host kernel grants it root's owner rights.

    /proc/self/uid_map cannot tell (bwrap nests user namespaces, so it shows the intermediate
    one); ownership can: files the host's root owns look, from inside, like files of whichever
    inside user host root maps to, and like the overflow id when it maps to nobody.
    """
    host_owned = ["/usr", "/usr/bin", "/usr/lib"]
    for path in host_owned:
        assert os.stat(path).st_uid == 0 and os.stat(path).st_gid == 0, f"{path} should be root's on the host"
    observed = probe(
        sandbox,
        f"""
        import os
        owners = {{path: [os.stat(path).st_uid, os.stat(path).st_gid] for path in {host_owned!r}}}
        observed = {{'me': [os.getuid(), os.getgid()], 'owners': owners}}
    """,
    )
    assert isinstance(observed, dict)
    uid, gid = observed["me"]
    owned_by_me = {
        path: owner for path, owner in observed["owners"].items() if owner[0] == uid or owner[1] == gid
    }
    assert owned_by_me == {}, (
        f"host root's files belong to the sandbox user (uid {uid}, gid {gid}) inside: it is root on the host"
    )
    service_still_serves()


def test_cannot_write_host_kernel_settings(sandbox, service_still_serves):
    """Global sysctls (core_pattern runs a program as host root on a crash) must not be writable.

    Probed by opening for write only: nothing is ever written.
    """
    observed = probe(
        sandbox,
        """
        import errno, os
        candidates = ['/proc/sys/kernel/core_pattern', '/proc/sys/kernel/modprobe', '/proc/sys/kernel/panic',
                      '/proc/sys/kernel/panic_on_oops', '/proc/sys/kernel/poweroff_cmd',
                      '/proc/sys/kernel/dmesg_restrict', '/proc/sys/kernel/kptr_restrict',
                      '/proc/sys/kernel/randomize_va_space', '/proc/sys/fs/suid_dumpable',
                      '/proc/sys/vm/drop_caches', '/proc/sys/vm/overcommit_memory', '/proc/sysrq-trigger']
        outcomes = {}
        for path in candidates:
            try:
                fd = os.open(path, os.O_WRONLY)
            except OSError as exc:
                outcomes[path] = errno.errorcode.get(exc.errno, str(exc.errno))
            else:
                os.close(fd)
                outcomes[path] = 'OPENED FOR WRITING'
        observed = outcomes
    """,
    )
    assert isinstance(observed, dict)
    # The sysctl tree is there (gVisor's is its own Sentry's: a few files, core_pattern not among them).
    assert observed["/proc/sys/vm/overcommit_memory"] != "ENOENT", "the probe must see the sysctl tree"
    writable = sorted(path for path, outcome in observed.items() if outcome == "OPENED FOR WRITING")
    assert writable == [], f"host-wide kernel settings writable from inside the sandbox: {writable}"
    assert set(observed.values()) <= {"EACCES", "EPERM", "EROFS", "ENOENT"}, observed
    service_still_serves()


def test_system_and_template_runtime_are_read_only(sandbox, service_still_serves):
    observed = probe(
        sandbox,
        """
        import errno, os, sys
        outcomes = {}
        for folder in ('/usr', '/usr/bin', '/usr/lib', sys.prefix, sys.base_prefix,
                       os.path.dirname(os.__file__), os.path.dirname(sys.executable)):
            path = os.path.join(folder, 'escape-probe-' + os.urandom(6).hex())
            try:
                with open(path, 'x') as f:  # never truncates anything, and is removed at once
                    f.write('x')
                os.unlink(path)
                outcomes[folder] = 'WRITTEN'
            except OSError as exc:
                outcomes[folder] = errno.errorcode.get(exc.errno)
        for path in ('/etc/passwd', '/etc/hosts', sys.executable):
            try:
                with open(path, 'a'):
                    pass
                outcomes[path] = 'OPENED FOR APPEND'
            except OSError as exc:
                outcomes[path] = errno.errorcode.get(exc.errno)
        mounted_writable = [folder for folder in ('/usr', sys.prefix, sys.base_prefix)
                            if not os.statvfs(folder).f_flag & os.ST_RDONLY]
        observed = {'outcomes': outcomes, 'mounted_writable': mounted_writable}
    """,
    )
    assert isinstance(observed, dict)
    allowed = ("EROFS", "EACCES", "EPERM", "ETXTBSY")  # ETXTBSY: the running interpreter itself
    written = {path: outcome for path, outcome in observed["outcomes"].items() if outcome not in allowed}
    assert written == {}, f"writable system or runtime paths: {written}"
    assert observed["mounted_writable"] == [], "the system or the template runtime is mounted read-write"
    service_still_serves()


def test_root_filesystem_is_read_only(sandbox, service_still_serves):
    """Only the workdir, /tmp (size-capped) and /dev/shm may take writes; '/' and /etc may not."""
    observed = probe(
        sandbox,
        """
        import errno, os
        outcomes = {}
        name = 'escape-probe-' + os.urandom(6).hex()
        for folder in ('/', '/etc', '/run', '/home'):
            path = os.path.join(folder, name)
            try:
                with open(path, 'x') as f:  # never truncates anything, and is removed at once
                    f.write('x')
                os.unlink(path)
                outcomes[folder] = 'WRITTEN'
            except OSError as exc:
                outcomes[folder] = errno.errorcode.get(exc.errno)
        observed = outcomes
    """,
    )
    assert isinstance(observed, dict)
    written = sorted(path for path, outcome in observed.items() if outcome == "WRITTEN")
    assert written == [], f"the sandbox can write outside its workdir and /tmp: {written}"
    service_still_serves()


def test_cannot_create_namespaces_or_mount(sandbox, service_still_serves):
    observed = probe(
        sandbox,
        """
        import ctypes, errno, subprocess, sys
        libc = ctypes.CDLL(None, use_errno=True)
        def call(fn, *args):
            ctypes.set_errno(0)
            return 'SUCCEEDED' if fn(*args) == 0 else errno.errorcode.get(ctypes.get_errno())
        # unshare(CLONE_NEWUSER) needs a single-threaded process; the kernel has threads.
        child = ('import ctypes, errno, sys; libc = ctypes.CDLL(None, use_errno=True);'
                 'flag = int(sys.argv[1]);'
                 'print("SUCCEEDED" if libc.unshare(flag) == 0 else errno.errorcode[ctypes.get_errno()])')
        outcomes = {}
        flags = {'user': 0x10000000, 'mount': 0x00020000, 'net': 0x40000000, 'pid': 0x20000000}
        for name, flag in flags.items():
            done = subprocess.run([sys.executable, '-c', child, str(flag)], capture_output=True, text=True)
            outcomes['unshare ' + name] = done.stdout.strip() or done.stderr.strip()[-200:]
        tool = subprocess.run(['unshare', '--user', '--map-root-user', 'id', '-u'], capture_output=True)
        outcomes['unshare tool'] = 'SUCCEEDED' if tool.returncode == 0 else 'failed'
        outcomes['mount tmpfs'] = call(libc.mount, b'none', b'/tmp', b'tmpfs', 0, None)
        outcomes['mount proc'] = call(libc.mount, b'proc', b'/tmp', b'proc', 0, None)
        outcomes['mount cgroup'] = call(libc.mount, b'cgroup2', b'/tmp', b'cgroup2', 0, None)
        outcomes['chroot'] = call(libc.chroot, b'/tmp')
        observed = outcomes
    """,
    )
    assert isinstance(observed, dict)
    succeeded = sorted(k for k, v in observed.items() if v == "SUCCEEDED")
    assert succeeded == [], f"privileged operations succeeded inside: {succeeded} ({observed})"
    assert observed["unshare user"] in ("ENOSPC", "EPERM", "EUSERS"), observed
    assert all(observed[k] == "EPERM" for k in ("mount tmpfs", "mount proc", "mount cgroup", "chroot")), (
        observed
    )
    service_still_serves()


# Extra attacks a hostile model would try --------------------------------------------------------


def test_cgroup_limits_are_out_of_reach_and_applied(sandbox, service_still_serves):
    observed = probe(
        sandbox,
        """
        import os
        with open('/proc/self/cgroup') as f:
            groups = [line.strip() for line in f]
        writable = []
        for path in ('/sys/fs/cgroup', '/sys/fs/cgroup/pids.max', '/sys/fs/cgroup/memory.max'):
            if os.path.exists(path) and os.access(path, os.W_OK):
                writable.append(path)
        cgroupfs = sorted(os.listdir('/sys/fs/cgroup')) if os.path.isdir('/sys/fs/cgroup') else []
        observed = {'cgroupfs': cgroupfs, 'groups': groups, 'writable': writable}
    """,
    )
    assert isinstance(observed, dict)
    assert observed["writable"] == []
    assert observed["cgroupfs"] == [], "cgroupfs is mounted inside"
    assert all(line.endswith(":/") for line in observed["groups"]), observed["groups"]

    # From the host: every process of the sandbox is in a group enforcing the configured limits.
    host_pids = host_pids_in(pid_namespace_of(sandbox))
    assert host_pids
    for pid in host_pids:
        limits = {}
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            base = Path("/sys/fs/cgroup") if controllers == "" else None
            for controller in controllers.split(","):
                if controller in ("pids", "memory"):
                    base = Path("/sys/fs/cgroup") / controller
            if base is None:
                continue
            folder = base / path.lstrip("/")
            for name in ("pids.max", "memory.max", "memory.limit_in_bytes"):
                if (folder / name).exists():
                    limits[name] = (folder / name).read_text().strip()
        assert limits.get("pids.max") == str(PROCESS_LIMIT), (pid, limits)
        memory = limits.get("memory.max") or limits.get("memory.limit_in_bytes")
        assert memory is not None and int(memory) == MEMORY_LIMIT, (pid, limits)
    service_still_serves()


def test_files_api_does_not_follow_links_out_of_the_workdir(
    sandbox, sandboxd, tmp_path, service_still_serves
):
    """sandboxd opens workdir paths on the host: a link planted inside must not lead it out.

    The links point at a canary folder of the test's own, so a regression clobbers nothing real.
    """
    canary = tmp_path / "canary.txt"
    canary.write_text("host secret")
    observed = probe(
        sandbox,
        f"""
        import errno, os
        os.symlink('/', 'root_link')
        os.symlink({str(canary)!r}, 'canary_link')
        os.symlink({str(tmp_path)!r}, 'canary_dir_link')
        os.symlink({str(sandboxd.data_dir)!r}, 'data_link')
        os.mkfifo('fifo')  # a reader that blocks on it would hang sandboxd
        try:
            os.link('/etc/passwd', 'hard_link')
            hard = 'LINKED'
        except OSError as exc:
            hard = errno.errorcode.get(exc.errno)
        observed = {{'hard_link': hard}}
    """,
    )
    assert isinstance(observed, dict)
    assert observed["hard_link"] in ("EXDEV", "EPERM", "EACCES", "EROFS"), observed
    for path in (
        "canary_link",
        "canary_dir_link/canary.txt",
        f"root_link{canary}",
        "root_link/etc/passwd",
        "data_link/sandboxes",
        "fifo",
        "../../../../etc/passwd",
        "/etc/passwd",
        f"root_link{PROJECT_ROOT}/config/settings.py",
    ):
        with pytest.raises((InvalidPath, FileNotFound)):
            sandbox.files.read(path)
    for path in ("root_link", "canary_dir_link", "data_link"):
        with pytest.raises((InvalidPath, FileNotFound)):
            sandbox.files.list(path)
    for path in ("canary_dir_link/planted.txt", f"root_link{tmp_path}/planted.txt"):
        with pytest.raises(InvalidPath):
            sandbox.files.write(path, b"written through a link")
    try:  # refusing is fine, and so is replacing the link itself by a regular file
        sandbox.files.write("canary_link", b"overwritten through a link")
    except InvalidPath:
        pass
    assert canary.read_text() == "host secret", "the files API wrote through a symlink"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["canary.txt"], "the files API created a host file"
    service_still_serves()


def test_kernel_log_and_host_handles_are_out_of_reach(sandbox, service_still_serves):
    """dmesg (syslog(2)) and open_by_handle_at (the 'shocker' escape) need host privileges."""
    observed = probe(
        sandbox,
        """
        import ctypes, errno, os
        libc = ctypes.CDLL(None, use_errno=True)
        buffer = ctypes.create_string_buffer(4096)
        ctypes.set_errno(0)
        read = libc.klogctl(3, buffer, 4096)  # SYSLOG_ACTION_READ_ALL
        outcomes = {'klogctl': 'READ' if read > 0 else errno.errorcode.get(ctypes.get_errno(), str(read))}
        try:  # opening is the privileged step; reading would steal the host's log messages
            os.close(os.open('/proc/kmsg', os.O_RDONLY | os.O_NONBLOCK))
            outcomes['/proc/kmsg'] = 'OPENED'
        except OSError as exc:
            outcomes['/proc/kmsg'] = errno.errorcode.get(exc.errno)
        class FileHandle(ctypes.Structure):
            _fields_ = [('handle_bytes', ctypes.c_uint), ('handle_type', ctypes.c_int),
                        ('f_handle', ctypes.c_ubyte * 128)]
        handle, mount_id = FileHandle(handle_bytes=128), ctypes.c_int()
        libc.name_to_handle_at(-100, b'/usr/bin/env', ctypes.byref(handle), ctypes.byref(mount_id), 0)
        # Inode 2 of the same filesystem is its root directory: the classic way out of a bind mount.
        handle.f_handle[0:8] = (2).to_bytes(8, 'little')
        mount_fd = os.open('/usr', os.O_RDONLY)
        ctypes.set_errno(0)
        fd = libc.open_by_handle_at(mount_fd, ctypes.byref(handle), os.O_RDONLY)
        outcomes['open_by_handle_at'] = 'OPENED' if fd >= 0 else errno.errorcode.get(ctypes.get_errno())
        observed = outcomes
    """,
    )
    assert isinstance(observed, dict)
    assert observed["klogctl"] == "EPERM", observed
    assert observed["/proc/kmsg"] in ("EPERM", "EACCES", "ENOENT"), observed
    assert observed["open_by_handle_at"] == "EPERM", observed
    service_still_serves()


def test_output_flood_is_capped(sandbox, service_still_serves):
    execution = sandbox.run_code("import sys\nfor _ in range(64):\n    sys.stdout.write('x' * (1 << 20))\n")
    assert execution.error is None
    assert len(execution.stdout.encode()) <= OUTPUT_LIMIT
    assert "output truncated" in execution.stderr
    service_still_serves()
