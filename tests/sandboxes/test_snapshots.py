"""Snapshots, restore and fork against real kernels: state comes back, damage is caught."""

from __future__ import annotations

import contextlib
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxes import (
    InvalidPath,
    NotFound,
    Sandbox,
    SnapshotCorrupt,
    SnapshotFailed,
    SnapshotNotFound,
    SnapshotTooLarge,
)
from tests.conftest import TEST_SETTINGS
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process

ANALYSIS_STATE = """
import numpy as np, pandas as pd, matplotlib.pyplot as plt
from sklearn.linear_model import LinearRegression
x = 41
rng = np.random.default_rng(7)
df = pd.DataFrame({"a": rng.normal(size=500), "b": rng.integers(0, 9, 500), "c": list("xyz" * 166 + "xy")})
df["d"] = pd.date_range("2024-01-01", periods=500, freq="h")
matrix = rng.random((30, 4))
model = LinearRegression().fit(matrix[:, :3], matrix[:, 3])
double = lambda v: v * 2
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5
point = Point(3, 4)
fig, ax = plt.subplots()
ax.plot([1, 2, 3], [4, 5, 6], label="line")
plt.close(fig)
counter = (i for i in range(3))
import os
os.makedirs("data", exist_ok=True)
df.to_csv("data/frame.csv", index=False)
"""

CHECKS = """
import json
print(json.dumps({
    "x": x,
    "df_equal": bool(df.equals(pd.read_csv("data/frame.csv", parse_dates=["d"]))),
    "dtypes": [str(t) for t in df.dtypes],
    "prediction": float(model.predict(matrix[:1, :3])[0]),
    "refit": float(LinearRegression().fit(matrix[:, :3], matrix[:, 3]).predict(matrix[:1, :3])[0]),
    "double": double(21),
    "norm": point.norm(),
    "class_name": type(point).__name__,
    "lines": [line.get_label() for line in fig.axes[0].lines],
    "has_counter": "counter" in globals(),
}))
"""


def run(sandbox: Sandbox, code: str) -> str:
    execution = sandbox.run_code(textwrap.dedent(code))
    assert execution.error is None, execution.error.traceback if execution.error else ""
    return execution.stdout


def checks(sandbox: Sandbox) -> dict[str, object]:
    return json.loads(run(sandbox, CHECKS))


@pytest.fixture
def restored(sandboxd: SandboxdProcess) -> Iterator[list[Sandbox]]:
    """Sandboxes made by restore or fork, killed when the test ends."""
    made: list[Sandbox] = []
    yield made
    for sandbox in made:
        sandbox.kill()
        sandbox.close()


def restore(sandboxd: SandboxdProcess, made: list[Sandbox], snapshot_id: str, **options: object) -> Sandbox:
    sandbox = Sandbox.restore(snapshot_id, url=sandboxd.url, token=sandboxd.token, **options)  # type: ignore[arg-type]
    made.append(sandbox)
    return sandbox


def test_common_analysis_state_round_trips(sandbox, sandboxd, restored):
    run(sandbox, ANALYSIS_STATE)
    before = checks(sandbox)
    snapshot = sandbox.snapshot()
    assert set(snapshot.unsaved) == {"counter"}  # a generator cannot be pickled: named, not fatal
    assert {"x", "df", "model", "double", "Point", "point", "fig"} <= set(snapshot.contexts[0].saved)
    assert snapshot.file_count == 1 and snapshot.size > 0

    again = restore(sandboxd, restored, snapshot.snapshot_id)
    assert again.sandbox_id != sandbox.sandbox_id
    assert again.default_context.id == sandbox.default_context.id
    assert again.restore_report is not None and again.restore_report.unsaved == ["counter"]
    after = checks(again)
    assert after == {**before, "has_counter": False}
    assert after["x"] == 41 and after["df_equal"] is True and after["norm"] == 5.0
    assert after["prediction"] == pytest.approx(after["refit"])
    assert again.files.read("data/frame.csv") == sandbox.files.read("data/frame.csv")


def test_every_context_comes_back_with_its_own_variables(sandbox, sandboxd, restored):
    second = sandbox.create_code_context()
    run(sandbox, "label = 'first'")
    second.run_code("label = 'second'")
    again = restore(sandboxd, restored, sandbox.snapshot().snapshot_id)
    assert again.run_code("label").text == "'first'"
    assert again.run_code("label", context=again.create_code_context()).error is not None  # fresh: no state
    from sandboxes.client.sync import CodeContext

    assert CodeContext(again, second.id).run_code("label").text == "'second'"


def test_replay_rebuilds_what_could_not_be_saved(sandbox, sandboxd, restored):
    run(sandbox, "x = 41\ncounter = (i for i in range(3))\nnext(counter)")
    run(sandbox, "x += 1")
    snapshot = sandbox.snapshot()
    assert list(snapshot.unsaved) == ["counter"]

    plain = restore(sandboxd, restored, snapshot.snapshot_id)
    assert plain.run_code("x").text == "42"
    assert plain.run_code("counter").error is not None

    replayed = restore(sandboxd, restored, snapshot.snapshot_id, replay=True)
    assert replayed.restore_report is not None and replayed.restore_report.contexts[0].replayed
    assert replayed.run_code("x").text == "42"  # the saved value, not the replay's (42 too, by luck of +1)
    assert replayed.run_code("next(counter)").text == "1"


# Harmless where it first runs; in a replay (the file "armed" came back with the snapshot) a
# thread takes the namespace's pipe and never reads it, and the load cell fails once it has.
HOSTILE_REPLAY = """
import os, sys, threading, time
if os.path.exists("armed"):
    held = []
    def hold():
        while not held:
            names = os.listdir(".sandbox-state") if os.path.isdir(".sandbox-state") else []
            held.extend(open(os.path.join(".sandbox-state", n), "rb") for n in names)
            time.sleep(0.001)
    class NoDill:
        def __getattr__(self, name):
            while not held:
                time.sleep(0.001)
            time.sleep(0.3)
            raise RuntimeError("no dill here")
    threading.Thread(target=hold, daemon=True).start()
    sys.modules["dill"] = NoDill()
open("armed", "w").close()
"""


def test_a_kernel_that_holds_the_namespace_pipe_cannot_hang_a_restore(
    make_sandbox, sandboxd, service_still_serves
):
    sandbox = make_sandbox(metadata={"test": "hostile-replay"})
    run(sandbox, "import numpy as np\nbig = np.arange(2_000_000)\ncounter = (i for i in range(3))")
    run(sandbox, HOSTILE_REPLAY)
    snapshot = sandbox.snapshot()
    with pytest.raises(SnapshotFailed, match="no dill here"):
        Sandbox.restore(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token, replay=True)
    listed = Sandbox.list({"test": "hostile-replay"}, url=sandboxd.url, token=sandboxd.token)
    assert [s.sandbox_id for s in listed] == [sandbox.sandbox_id]
    service_still_serves()


def test_a_namespace_larger_than_the_disk_quota_is_saved(sandbox, sandboxd, restored):
    # 80 MB of variables against the test sandboxd's 64 MB workdir: the namespace is drained
    # from the kernel through a pipe, never written to the sandbox's disk.
    run(sandbox, "import numpy as np\nbig = np.arange(10_000_000)")
    snapshot = sandbox.snapshot()
    assert snapshot.size > 80_000_000
    again = restore(sandboxd, restored, snapshot.snapshot_id)
    assert again.run_code("int(big.sum()), big.dtype.name").text == f"({sum(range(10_000_000))}, 'int64')"


def hostile_pickler(dump_body: str) -> str:
    """A cell that puts, in dill's place, a Pickler whose ``dump(state)`` runs ``dump_body``
    (``self.capped`` is the size-capped writer kernel_state gives it)."""
    dump = textwrap.indent(textwrap.dedent(dump_body).strip("\n"), " " * 8)
    return f"""
import os, sys, threading, time, types
class Pickler:
    dispatch = {{}}
    def __init__(self, capped, protocol=None):
        self.capped = capped
    def dump(self, state):
{dump}
sys.modules["dill"] = types.SimpleNamespace(Pickler=Pickler)
"""


# It ignores the size limit it is given: it writes to the pipe under the capped writer until
# the pipe is closed on it.
ENDLESS_PICKLER = hostile_pickler("""
    while True:
        self.capped.stream.write(b"x" * (1 << 20))
""")

# It leaves a thread holding the pipe open, silent, and claims a megabyte it never sent.
SILENT_HOLDER = hostile_pickler("""
    held = open(self.capped.stream.name, "wb")
    threading.Thread(target=lambda: (time.sleep(3600), held), daemon=True).start()
    self.capped.written = 1 << 20
""")


def test_a_kernel_that_writes_past_the_limit_is_cut_off(own_sandboxd):
    sandbox = Sandbox.create(url=own_sandboxd.url, token=own_sandboxd.token)
    run(sandbox, "x = 1")
    run(sandbox, ENDLESS_PICKLER)
    with pytest.raises(SnapshotTooLarge, match="limit"):
        sandbox.snapshot()
    assert sandbox.run_code("x").text == "1"
    assert list((own_sandboxd.data_dir / "scratch").iterdir()) == []
    sandbox.kill()
    sandbox.close()


def test_a_kernel_that_holds_the_pipe_open_cannot_hang_a_snapshot(sandbox, service_still_serves):
    run(sandbox, "x = 1")
    run(sandbox, SILENT_HOLDER)
    with pytest.raises(SnapshotFailed, match="did not arrive whole"):
        sandbox.snapshot()
    assert sandbox.run_code("x").text == "1"
    service_still_serves()


def test_a_fork_is_independent(sandbox, restored):
    run(sandbox, "x = 41\nopen('notes.txt', 'w').write('original')")
    fork = sandbox.fork()
    restored.append(fork)
    assert fork.sandbox_id != sandbox.sandbox_id
    run(fork, "x = 0\nopen('notes.txt', 'w').write('forked')")
    assert sandbox.run_code("x").text == "41"
    assert sandbox.files.read("notes.txt") == "original"
    assert fork.run_code("x").text == "0"
    assert fork.files.read("notes.txt") == "forked"


def test_snapshot_info_and_delete(sandbox, sandboxd):
    run(sandbox, "x = 1")
    snapshot = sandbox.snapshot()
    info = Sandbox.get_snapshot(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token)
    assert info == snapshot
    Sandbox.delete_snapshot(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token)
    with pytest.raises(SnapshotNotFound):
        Sandbox.restore(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token)
    with pytest.raises(NotFound):
        Sandbox.get_snapshot("../../etc/passwd", url=sandboxd.url, token=sandboxd.token)
    with pytest.raises(SnapshotNotFound):
        Sandbox.get_snapshot("0" * 32, url=sandboxd.url, token=sandboxd.token)


def snapshot_file(sandboxd: SandboxdProcess, snapshot_id: str) -> Path:
    return sandboxd.view(sandboxd.data_dir / "snapshots" / f"{snapshot_id}.snapshot")


@pytest.mark.parametrize("damage", ["truncated", "flipped", "emptied"])
def test_a_damaged_snapshot_is_a_clear_error(make_sandbox, sandboxd, service_still_serves, damage):
    sandbox = make_sandbox(metadata={"test": damage})
    run(sandbox, "import numpy as np\nx = 41\nbig = np.arange(200_000)\nopen('f.txt', 'w').write('x' * 5000)")
    snapshot = sandbox.snapshot()
    path = snapshot_file(sandboxd, snapshot.snapshot_id)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":  # inside the pickled state, past the tar header
        middle = 1024 + len(data) // 4
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
    else:
        path.write_bytes(b"")
    with pytest.raises(SnapshotCorrupt):
        Sandbox.restore(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token)
    if damage != "flipped":  # info reads only the manifest; a restore checks every byte
        with pytest.raises(SnapshotCorrupt):
            Sandbox.get_snapshot(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token)
    # A restore inherits the snapshot's metadata: the failed ones left no sandbox behind.
    listed = Sandbox.list({"test": damage}, url=sandboxd.url, token=sandboxd.token)
    assert [s.sandbox_id for s in listed] == [sandbox.sandbox_id]
    service_still_serves()


def test_state_folder_as_a_link_reads_nothing_of_the_host(sandbox, service_still_serves):
    run(sandbox, "x = 1\nimport os\nos.symlink('/tmp', '.sandbox-state')")
    with pytest.raises((InvalidPath, SnapshotFailed)):
        sandbox.snapshot()
    assert sandbox.run_code("x").text == "1"  # the sandbox is still usable
    service_still_serves()


def sandboxd_of_its_own(**settings: str) -> contextlib.AbstractContextManager[SandboxdProcess]:
    """A sandboxd with the test settings and these, that the test may kill."""
    settings = {**TEST_SETTINGS, "SANDBOXD_POOL_SIZE": "1", **settings}
    return own_sandboxd_process(settings, prefix="sandboxd-snap-")


@pytest.fixture
def own_sandboxd() -> Iterator[SandboxdProcess]:
    """A sandboxd of this test's own, with a small snapshot limit."""
    with sandboxd_of_its_own(SANDBOXD_SNAPSHOT_MAX_BYTES=str(8 << 20)) as process:
        yield process


@pytest.mark.slow
def test_a_kernel_holding_most_of_its_memory_limit_is_saved():
    # 400 MB in one array, in a kernel of 130-210 MB, under a 768 MiB limit: pickling used to
    # copy each array before writing it, and the snapshot's copy got the kernel killed.
    with sandboxd_of_its_own(SANDBOXD_MEMORY_LIMIT="768M") as service:
        connection = {"url": service.url, "token": service.token}
        sandbox = Sandbox.create(**connection)
        run(sandbox, "import numpy as np\nbig = np.ones(50_000_000)\nbig[-1] = 7")
        snapshot = sandbox.snapshot()
        assert sandbox.run_code("float(big.sum())").text == str(50_000_000 - 1 + 7.0)
        sandbox.kill()
        again = Sandbox.restore(snapshot.snapshot_id, **connection)
        assert again.run_code("float(big.sum()), big.nbytes").text == f"({50_000_000 - 1 + 7.0}, 400000000)"
        again.kill()
        for made in (sandbox, again):
            made.close()


@pytest.mark.slow
def test_restore_after_sandboxd_is_killed(own_sandboxd):
    service = {"url": own_sandboxd.url, "token": own_sandboxd.token}
    sandbox = Sandbox.create(**service)
    run(sandbox, "import pandas as pd\nframe = pd.DataFrame({'v': range(1000)})\nx = 41")
    snapshot = sandbox.snapshot()
    sandbox.close()
    own_sandboxd.crash()
    own_sandboxd.start()
    service = {"url": own_sandboxd.url, "token": own_sandboxd.token}
    again = Sandbox.restore(snapshot.snapshot_id, **service)
    assert again.run_code("x + 1").text == "42"
    assert again.run_code("int(frame.v.sum())").text == str(sum(range(1000)))
    again.kill()
    again.close()


def test_a_snapshot_over_the_limit_is_refused(own_sandboxd):
    sandbox = Sandbox.create(url=own_sandboxd.url, token=own_sandboxd.token)
    run(sandbox, "import numpy as np\nbig = np.ones(2_000_000)\nx = 1")  # 16 MB > the 8 MB limit
    with pytest.raises(SnapshotTooLarge, match="limit"):
        sandbox.snapshot()
    leftovers = list((own_sandboxd.data_dir / "scratch").iterdir())
    assert leftovers == []
    assert list((own_sandboxd.data_dir / "snapshots").iterdir()) == []
    run(sandbox, "del big")
    assert "x" in sandbox.snapshot().contexts[0].saved
    sandbox.kill()
    sandbox.close()
