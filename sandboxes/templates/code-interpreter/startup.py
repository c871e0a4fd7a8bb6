"""Runs in every code-interpreter kernel before the first cell: warm imports and rich display."""

import matplotlib

matplotlib.use("module://matplotlib_inline.backend_inline")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402, F401
import pandas as pd  # noqa: E402

pd.set_option("display.max_columns", 50)
pd.set_option("display.width", 160)
plt.rcParams["figure.dpi"] = 100

try:
    import plotly.io as pio

    # A figure displays as its JSON bundle (for plotly.js); no browser exists in here.
    pio.renderers.default = "plotly_mimetype"
except ImportError:
    pass

del matplotlib
