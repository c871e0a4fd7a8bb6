"""Real files of each kind, written by the real libraries (pandas, openpyxl, pyarrow) in the
sandbox template's own interpreter: the project's environment has none of them installed."""

from __future__ import annotations

import gzip
import io
import subprocess
import tempfile
import zipfile
from pathlib import Path

from django.conf import settings

FRENCH_CSV = (
    "produit;prix;quantité;région\n"
    "café;1,50;1.200;Île-de-France\n"
    "thé;2,25;300;Provence\n"
    "crème brûlée;4,75;2.450;Bretagne\n"
).encode("cp1252")
SALES_CSV = b"region,units,unit_price\nnorth,3,2.5\nsouth,5,1.25\neast,7,4.0\nwest,1,9.0\n"


def template_python() -> Path:
    return Path(settings.SANDBOXD_TEMPLATES_DIR) / "code-interpreter" / "venv" / "bin" / "python"


def written_by(code: str) -> bytes:
    """The bytes of the file ``code`` writes to the path named ``out`` (bound for it)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "made"
        script = f"import pandas as pd\nout = {str(out)!r}\n{code}"
        subprocess.run([str(template_python()), "-c", script], check=True, timeout=120)
        return out.read_bytes()


def workbook() -> bytes:
    """An .xlsx written by openpyxl (through pandas) with two sheets of different shapes."""
    return written_by(
        "with pd.ExcelWriter(out, engine='openpyxl') as book:\n"
        "    pd.DataFrame({'year': [2021, 2022, 2023], 'jobs': [10.5, 11.25, 12.0]})"
        ".to_excel(book, sheet_name='employment', index=False)\n"
        "    pd.DataFrame({'country': ['FR', 'DE'], 'gdp': [2.9, 4.1], 'q': [1, 2], 'ok': [True, False]})"
        ".to_excel(book, sheet_name='gdp', index=False)\n"
    )


def parquet() -> bytes:
    return written_by(
        "pd.DataFrame({'state': ['CA', 'CA', 'NY', 'TX', 'TX', 'TX'], 'elevation': [10, 20, 30, 40, 50, 60]})"
        ".to_parquet(out, engine='pyarrow')\n"
    )


def gzipped(content: bytes) -> bytes:
    return gzip.compress(content, mtime=0)


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()
