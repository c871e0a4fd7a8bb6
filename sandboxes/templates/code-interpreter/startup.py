"""Runs in every code-interpreter kernel before the first cell: warm imports and rich display."""


def _prepare_matplotlib() -> None:
    """Copy the template's prebuilt font list in, sparing each kernel matplotlib's font scan."""
    import glob
    import os
    import shutil

    config_dir = os.environ["MPLCONFIGDIR"]
    os.makedirs(config_dir, exist_ok=True)
    template = os.environ.get("SANDBOX_TEMPLATE", "")
    for cached in glob.glob(os.path.join(template, "mplconfig", "fontlist-*.json")):
        shutil.copy(cached, config_dir)

    import matplotlib

    matplotlib.use("module://matplotlib_inline.backend_inline")


def _prefer_interactive_plotly() -> None:
    """A figure displays as its JSON bundle (for plotly.js); no browser exists in here.

    Said through plotly's own variable, read when plotly is first imported: importing plotly.io
    here would cost every kernel ~0.15 s, most never drawing a plotly figure."""
    import os

    os.environ.setdefault("PLOTLY_RENDERER", "plotly_mimetype")


def _prepare_snapshots() -> None:
    """Import what saving and loading the namespace needs (sandboxd's snapshots), binding no name."""
    __import__("dill")


_prepare_matplotlib()
_prefer_interactive_plotly()
_prepare_snapshots()
del _prepare_matplotlib, _prefer_interactive_plotly, _prepare_snapshots

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402, F401
import pandas as pd  # noqa: E402

pd.set_option("display.max_columns", 50)
pd.set_option("display.width", 160)
plt.rcParams["figure.dpi"] = 100
