"""The code-interpreter template reads data in any shape (openpyxl, xlrd, pyarrow, duckdb,
polars, charset-normalizer) without kernels importing any of it at start, and `make template`
fills its wheelhouse from wheelhouse.txt and SANDBOX_EXTRA_WHEELS."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

from sandboxes import Sandbox, templates
from sandboxes.templates import wheelhouse
from tests.conftest import TEST_SETTINGS
from tests.sandboxd_process import own_sandboxd_process
from tests.sandboxes.test_warm_pool import pooled

# What a kernel may import when a cell asks, never at start. (pyarrow is not here: pandas 3
# imports it itself, for its string type, whenever it is installed.)
READERS = ("openpyxl", "xlrd", "duckdb", "polars", "charset_normalizer", "plotly.io")
IMPORTED_AT_START = f"import sys; sorted(m for m in {READERS!r} if m in sys.modules)"


def template() -> templates.Template:
    return templates.get("code-interpreter", Path(settings.SANDBOXD_TEMPLATES_DIR))


def written_by(code: str) -> bytes:
    """The bytes of the file that ``code`` writes to ``out``, run by the template's own python
    (the project's environment has none of these libraries)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "made"
        script = f"import pandas as pd\nout = {str(out)!r}\n{code}"
        subprocess.run([str(template().python), "-c", script], check=True, timeout=120)
        return out.read_bytes()


AIRPORTS = (
    "pd.DataFrame({'code': ['SFO', 'LAX', 'JFK', 'AUS', 'DFW'], 'state': ['CA', 'CA', 'NY', 'TX', 'TX'],"
    " 'elevation': [13, 125, 13, 542, 607]}).to_parquet(out)"
)


@pytest.mark.slow
def test_a_cold_kernel_imports_none_of_the_readers():
    """A kernel bubblewrap starts itself; a forked one holds what its zygote imported, the warm-up
    included (as the pooled kernel below does)."""
    settings_ = {**TEST_SETTINGS, "SANDBOXD_POOL_SIZE": "0", "SANDBOXD_FORK_SERVER": "false"}
    with own_sandboxd_process(settings_, prefix="sandboxd-cold-") as server:
        sandbox = Sandbox.create(url=server.url, token=server.token)
        try:
            assert sandbox.run_code(IMPORTED_AT_START).text == "[]"
            assert sandbox.run_code("import duckdb, polars; duckdb.__name__").text == "'duckdb'"
            assert sandbox.run_code(IMPORTED_AT_START).text == "['duckdb', 'polars']"  # the check sees them
        finally:
            sandbox.kill()
            sandbox.close()


def test_a_pooled_warmed_kernel_imports_none_of_the_readers(make_sandbox):
    """But charset_normalizer: numpy.f2py, which the warm-up's scipy imports, takes it when it
    is installed (while the kernel waits in the pool, not while a user waits)."""
    sandbox = pooled(make_sandbox)
    assert sandbox.run_code("import sys; 'sklearn.linear_model' in sys.modules").text == "True"  # warm.py ran
    assert sandbox.run_code(IMPORTED_AT_START).text == "['charset_normalizer']"


def test_duckdb_runs_sql_straight_over_an_uploaded_parquet_file(sandbox):
    sandbox.files.write("data/airports.parquet", written_by(AIRPORTS))
    counts = sandbox.run_code(
        "import duckdb\n"
        "duckdb.sql(\"select state, count(*) from 'data/airports.parquet' group by 1 order by 1\").fetchall()"
    )
    assert counts.error is None, counts.error
    assert counts.text == "[('CA', 2), ('NY', 1), ('TX', 2)]"


def test_pandas_reads_an_uploaded_parquet_file(sandbox):
    sandbox.files.write("data/airports.parquet", written_by(AIRPORTS))
    frame = sandbox.run_code(
        "df = pd.read_parquet('data/airports.parquet'); df.groupby('state').elevation.sum().to_dict()"
    )
    assert frame.error is None, frame.error
    assert frame.text == "{'CA': 138, 'NY': 13, 'TX': 1149}"


def test_polars_reads_an_uploaded_csv(sandbox):
    sandbox.files.write("data/sales.csv", b"region,units\nnorth,3\nsouth,5\nnorth,4\n")
    totals = sandbox.run_code(
        "import polars as pl\n"
        "pl.read_csv('data/sales.csv').group_by('region').agg(pl.col('units').sum()).sort('region').rows()"
    )
    assert totals.error is None, totals.error
    assert totals.text == "[('north', 7), ('south', 5)]"


def test_pandas_reads_an_uploaded_openpyxl_workbook(sandbox):
    book = written_by(
        "from openpyxl import Workbook\n"
        "wb = Workbook(); sheet = wb.active; sheet.title = 'jobs'\n"
        "for row in [('year', 'jobs'), (2022, 10.5), (2023, 12.25)]: sheet.append(row)\n"
        "wb.save(out)"
    )
    sandbox.files.write("data/jobs.xlsx", book)
    frame = sandbox.run_code("pd.read_excel('data/jobs.xlsx', sheet_name='jobs').to_dict('list')")
    assert frame.error is None, frame.error
    assert frame.text == "{'year': [2022, 2023], 'jobs': [10.5, 12.25]}"


DISHES = ["café crème", "thé glacé", "crème brûlée", "pâté en croûte", "bœuf bourguignon", "œufs mimosa"]
DISHES += ["gâteau à l'orange", "salade niçoise"]
FRENCH = "produit;prix;région\n" + "".join(f"{dish};{n},50;Île-de-France\n" for n, dish in enumerate(DISHES))


def test_charset_normalizer_names_a_legacy_encoding_and_xlrd_imports(sandbox):
    sandbox.files.write("data/fr.csv", FRENCH.encode("cp1252"))
    guess = sandbox.run_code(
        "import charset_normalizer, xlrd\n"
        "best = charset_normalizer.from_path('data/fr.csv').best()\n"
        "best.encoding, str(best).splitlines()[1], xlrd.__version__"
    )
    assert guess.error is None, guess.error
    assert guess.text == "('cp1252', 'café crème;0,50;Île-de-France', '2.0.2')"


# ---- the wheelhouse, as `make template` built it ------------------------------------------


def test_the_wheelhouse_holds_the_list_and_nothing_the_template_has():
    built = template()
    wheels = {wheelhouse.canonical(path.name.split("-")[0]) for path in built.wheelhouse.glob("*.whl")}
    listed = {
        wheelhouse.canonical(line.split("==")[0])
        for line in wheelhouse.listed_requirements(built.source / wheelhouse.LIST_FILE)
    }
    assert listed and listed <= wheels, listed - wheels
    out = subprocess.run(
        [str(built.python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True
    ).stdout
    installed = {wheelhouse.canonical(dist["name"]) for dist in json.loads(out)}
    # A wheel of a package the template has could only replace it.
    assert not wheels & installed, wheels & installed


def test_the_template_scripts_run_wherever_the_template_is_seen():
    pip = template().venv / "bin" / "pip"
    assert pip.read_bytes().startswith(b"#!/bin/sh\n"), "pip names a host path the sandbox cannot see"
    version = subprocess.run([str(pip), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("pip ")


def test_extra_wheels_are_split_on_spaces_and_commas():
    given = " tabulate,rapidfuzz  pyjanitor>=0.30,<1\nmissingno==0.5.2 "
    assert wheelhouse.extra_requirements(given) == [
        "tabulate",
        "rapidfuzz",
        "pyjanitor>=0.30,<1",
        "missingno==0.5.2",
    ]
    assert wheelhouse.extra_requirements("") == []


@pytest.fixture
def prebuilt(tmp_path, monkeypatch) -> tuple[templates.Template, list[list[str]]]:
    """A template root whose virtualenv counts as built, and wheelhouse builds recorded (pip's
    download is the outer edge: the network)."""
    built = templates.Template(name="code-interpreter", root=tmp_path / "code-interpreter")
    (built.root / "mplconfig").mkdir(parents=True)
    (built.root / "mplconfig" / "fontlist-v1.json").write_text("{}")
    (built.root / templates.READY_MARKER).write_text(built.fingerprint())
    calls: list[list[str]] = []

    def fetch(python: Path, requirements: list[str], dest: Path, **_: object) -> list[str]:
        calls.append(requirements)
        dest.mkdir(exist_ok=True)
        return []

    monkeypatch.setattr(wheelhouse, "build", fetch)
    return built, calls


def test_new_extra_wheels_rebuild_the_wheelhouse_and_not_the_virtualenv(prebuilt):
    built, calls = prebuilt
    listed = wheelhouse.listed_requirements(built.source / wheelhouse.LIST_FILE)
    built.build(log=lambda _: None)
    assert calls == [listed]
    assert built.is_built()
    built.build(log=lambda _: None)
    assert len(calls) == 1  # current: nothing fetched again
    built.build(extra_wheels=["rapidfuzz"], log=lambda _: None)
    assert calls[-1] == [*listed, "rapidfuzz"]
    assert not (built.root / "venv").exists()  # the virtualenv was left alone
    assert built.is_built()  # sandboxd need not be told which additions the build had


def test_a_wheelhouse_of_another_list_is_out_of_date(prebuilt, monkeypatch):
    built, _ = prebuilt
    built.build(log=lambda _: None)
    assert built.is_built()
    monkeypatch.setattr(
        templates.Template,
        "wheelhouse_fingerprint",
        lambda self, extra: {"list": "another", "extra": extra, "venv": self.fingerprint()},
    )
    assert not built.is_built()
