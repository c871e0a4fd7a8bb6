"""What every code-interpreter kernel imports as it starts (startup.py), imported once by the fork
server that forks them (sandboxes/forkserver), so their pages are shared. Binds no name a kernel sees."""

import importlib

for name in ("dill", "matplotlib.pyplot", "numpy", "pandas"):
    importlib.import_module(name)
