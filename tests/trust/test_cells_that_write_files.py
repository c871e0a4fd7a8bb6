"""The "writes" approval mode's reading of a cell: what writes files waits, what only reads runs."""

import pytest

from analyst.trust.file_writes import file_writes

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
