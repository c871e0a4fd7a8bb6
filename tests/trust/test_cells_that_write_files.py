"""The "writes" approval mode's reading of a cell: what writes files waits, what only reads runs."""

import pytest

from analyst.trust.file_writes import file_writes, writes

WRITES = [
    "df.to_csv('out.csv')",
    "df.to_parquet(path='out.parquet')",
    "summary.to_excel(writer, sheet_name='x')",
    "plt.savefig('chart.png')",
    "fig.write_image('chart.png')",
    "with open('notes.txt', 'w') as f:\n    f.write('x')",
    "open('log.txt', mode='a').close()",
    "open('new.txt', 'x')",
    "open(path, mode)",
    "from pathlib import Path\nPath('a.txt').write_text('hi')",
    "Path('data/old.csv').unlink()",
    "Path('a.bin').open('wb')",
    "import os\nos.remove('data/sales.csv')",
    "import shutil as sh\nsh.rmtree('data')",
    "from shutil import move\nmove('a', 'b')",
    "from os import rename as mv\nmv('a', 'b')",
    "np.save('arr.npy', a)",
    "import subprocess\nsubprocess.run(['rm', 'x'])",
    "os.system('rm -rf data')",
    "exec(source)",
    "import zipfile\nzipfile.ZipFile('a.zip', 'w')",
    "import tarfile\ntarfile.open('a.tgz', 'w:gz')",
    "pd.ExcelWriter('out.xlsx')",
    "%%writefile out.py\nprint(1)",
    "!rm data/sales.csv",
]
READS = [
    "df = pd.read_csv('data/sales.csv')\ndf.describe()",
    "text = df.to_csv()",  # returns the CSV as text: no file
    "print(df.to_string())",
    "with open('data/sales.csv') as f:\n    head = f.read(100)",
    "open('data/a.csv', 'r')",
    "Path('data/a.csv').open()",
    "df.rename(columns={'a': 'b'}).replace(0, 1)",
    "plt.plot([1, 2]); plt.show()",
    "import sys\nsys.stdout.write('hello')",
    "import os\nos.listdir('data')",
]


@pytest.mark.parametrize("code", WRITES)
def test_a_cell_that_writes_is_found(code):
    assert file_writes(code), code


@pytest.mark.parametrize("code", READS)
def test_a_cell_that_only_reads_is_not(code):
    assert file_writes(code) == [], code


def test_findings_name_the_line_and_the_call():
    code = "df = pd.read_csv('data/a.csv')\ntotal = df.sum()\ndf.to_csv('out.csv')\nplt.savefig('c.png')"
    assert file_writes(code) == ["line 3: df.to_csv(…) to a file", "line 4: plt.savefig(…)"]


WRITABLE = frozenset({"warehouse"})  # attached and not read-only; "archive" is read-only


@pytest.mark.parametrize(
    "code",
    [
        "%%sql warehouse\ndelete from orders",
        "engine = connection('warehouse')",
        "sql('warehouse', 'select 1')",
        "name = 'warehouse'\nengine = connection(name)",  # a name this reading cannot know
        "%%sql\ncopy (select * from sales) to 'out.csv'",  # DuckDB over the uploads, told to write
    ],
)
def test_a_cell_that_uses_a_writable_connection_waits(code):
    assert writes(code, WRITABLE)


@pytest.mark.parametrize(
    "code",
    [
        "%%sql archive\nselect * from orders",
        "%%sql\nselect region, sum(total) from sales group by 1",
        "frame = sql('archive', 'select * from orders')",
        "frame = sql('select * from sales')",  # DuckDB over the uploads
        "engine = connection('archive')",
    ],
)
def test_a_cell_that_reads_through_connections_runs(code):
    assert writes(code, WRITABLE) == []


def test_with_no_writable_connection_a_sql_cell_on_any_reads():
    assert writes("%%sql warehouse\nselect 1", frozenset()) == []
    assert writes("engine = connection(name)", frozenset()) == []
