"""Runs in pooled kernels while they wait to be taken (sandboxd sends it as a silent cell): the
imports most analyses reach for, too slow (~0.7 s) for every cold start to wait on. A restored
snapshot holding a fitted model needs scikit-learn before it can be unpickled. Binds no name."""

import importlib

for name in (
    "scipy.stats",
    "seaborn",
    "sklearn.linear_model",
    "sklearn.ensemble",
    "sklearn.model_selection",
    "sklearn.preprocessing",
    "sklearn.metrics",
):
    try:
        importlib.import_module(name)
    except ImportError:
        pass
