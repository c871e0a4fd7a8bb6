"""`%pip install` in a kernel installs from the template's wheelhouse with no network, into the
workdir's .packages; what the wheelhouse lacks fails at once with a message that says so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandboxes import Sandbox
from tests.sandboxd_process import SandboxdProcess

NOT_OFFLINE = "is not available offline: this sandbox has no network"
WHERE_TO_ADD = "sandboxes/templates/code-interpreter/wheelhouse.txt or SANDBOX_EXTRA_WHEELS"


@pytest.fixture
def restored(sandboxd: SandboxdProcess) -> Iterator[list[Sandbox]]:
    made: list[Sandbox] = []
    yield made
    for sandbox in made:
        sandbox.kill()
        sandbox.close()


def test_pip_installs_from_the_wheelhouse_and_the_package_imports_at_once(sandbox):
    assert (
        sandbox.run_code("import importlib.util; importlib.util.find_spec('tabulate') is None").text == "True"
    )
    install = sandbox.run_code("%pip install tabulate")
    assert install.error is None, install.error
    assert "Looking in links: /opt/template/wheelhouse" in install.stdout
    assert "Looking in indexes" not in install.stdout  # never an index: there is no network here
    assert "Successfully installed tabulate" in install.stdout
    where = sandbox.run_code("import tabulate; tabulate.__file__")
    assert where.error is None, where.error
    assert where.text.startswith("'/home/user/.packages/")  # the workdir: the venv is read-only
    table = sandbox.run_code("print(pd.DataFrame({'a': [1, 2]}).to_markdown())")  # pandas' use of it
    assert table.error is None and "|  0 |   1 |" in table.stdout, table.error or table.stdout


def test_a_package_the_wheelhouse_lacks_fails_with_a_clear_message(sandbox):
    result = sandbox.run_code("%pip install flask")
    assert result.error is not None
    assert result.error.name == "PackageNotAvailableOffline"
    assert result.error.value.startswith(f"flask {NOT_OFFLINE}. Packages it can install: ")
    assert "tabulate 0.10.0" in result.error.value and "xlsxwriter" in result.error.value
    assert WHERE_TO_ADD in result.error.value and "`make template`" in result.error.value


def test_a_version_the_wheelhouse_lacks_fails_with_the_same_message(sandbox):
    result = sandbox.run_code("%pip install 'tabulate==0.8.10'")
    assert result.error is not None and result.error.name == "PackageNotAvailableOffline"
    assert result.error.value.startswith(f"tabulate==0.8.10 {NOT_OFFLINE}")
    assert "from versions: 0.10.0" in result.stdout  # pip's own word, printed above


def test_what_the_template_has_is_already_satisfied(sandbox):
    result = sandbox.run_code("%pip install pandas")
    assert result.error is None, result.error
    assert "Requirement already satisfied: pandas in /opt/template/venv" in result.stdout


def test_pip_from_the_shell_is_offline_too(sandbox):
    """`!pip` (and subprocess) run the same pip, with the kernel's settings: it installs from
    the wheelhouse, and fails on the rest at once instead of retrying an index."""
    shell = sandbox.run_code("!pip install xlsxwriter")
    assert "Successfully installed xlsxwriter" in shell.stdout, shell.stdout + shell.stderr
    assert sandbox.run_code("import xlsxwriter; xlsxwriter.__name__").text == "'xlsxwriter'"
    missing = sandbox.run_code(
        "import subprocess\n"
        "done = subprocess.run(['pip', 'install', 'flask'], capture_output=True, text=True)\n"
        "print(done.returncode, done.stdout, done.stderr)"
    )
    assert missing.stdout.startswith("1 "), missing.stdout
    assert "No matching distribution found for flask" in missing.stdout
    assert "Looking in indexes" not in missing.stdout


def test_an_installed_package_comes_back_with_a_restored_snapshot(sandbox, sandboxd, restored):
    assert sandbox.run_code("%pip install pyxlsb").error is None
    assert sandbox.run_code("import pyxlsb").error is None  # bound: the namespace refers to it
    snapshot = sandbox.snapshot()
    again = Sandbox.restore(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token)
    restored.append(again)
    assert again.run_code("pyxlsb.__name__").text == "'pyxlsb'"
    fresh = again.run_code("import importlib; importlib.reload(pyxlsb).__file__")
    assert fresh.text.startswith("'/home/user/.packages/"), fresh.error or fresh.text


def test_the_packages_folder_is_hidden_and_holds_only_what_was_installed(sandbox):
    assert sandbox.run_code("%pip install pyxlsb").error is None
    names = {entry.name for entry in sandbox.files.list()}
    assert ".packages" in names  # hidden (a dot folder) from the files panel, kept by snapshots
    listed = sandbox.run_code(
        "import os; sorted(os.listdir('/home/user/.packages/lib/python3.11/site-packages'))"
    ).text
    assert "pyxlsb" in listed and "pandas" not in listed, listed
