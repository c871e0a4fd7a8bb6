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

    import sys

    import matplotlib

    matplotlib.use("module://matplotlib_inline.backend_inline")
    if "matplotlib_inline.backend_inline" in sys.modules and "matplotlib.pyplot" in sys.modules:
        # Forked from a zygote that had imported pyplot (sandboxes/forkserver): the backend was
        # loaded with no shell to hook into, so hook it into this one as `%matplotlib inline` does.
        get_ipython().enable_matplotlib("inline")  # noqa: F821 (IPython's builtin)


def _prefer_interactive_plotly() -> None:
    """A figure displays as its JSON bundle (for plotly.js); no browser exists in here.

    Said through plotly's own variable, read when plotly is first imported: importing plotly.io
    here would cost every kernel ~0.15 s, most never drawing a plotly figure.

    No PNG beside it: plotly's only image export (kaleido >= 1, which plotly 7 requires) drives
    a Chrome, and none runs in here. Tried with kaleido 1.5.0 and Debian's chromium 156 (seen
    under /usr): it dies at start (SIGTRAP once crashpad's ptrace is refused, or hangs with
    the zygote) under the kernel's bubblewrap and seccomp filter. The host describes a figure
    to the model from its JSON instead (analyst/trust/charts.py)."""
    import os

    os.environ.setdefault("PLOTLY_RENDERER", "plotly_mimetype")


def _prepare_snapshots() -> None:
    """Import what saving and loading the namespace needs (sandboxd's snapshots), binding no name."""
    __import__("dill")


def _offline_packages() -> None:
    """`%pip install NAME` (and `!pip install`) install from the template's wheelhouse, with no
    network, into the workdir's hidden .packages folder, which snapshots keep.

    Only pip's settings and a path entry here; the magic's code (offline_pip.py) loads when used."""
    import os
    import sys
    import sysconfig
    from importlib.machinery import (
        BYTECODE_SUFFIXES,
        EXTENSION_SUFFIXES,
        SOURCE_SUFFIXES,
        ExtensionFileLoader,
        FileFinder,
        SourceFileLoader,
        SourcelessFileLoader,
    )

    template = os.environ.get("SANDBOX_TEMPLATE", "/opt/template")
    prefix = os.path.join(os.environ.get("HOME", os.getcwd()), ".packages")
    scheme, where = sysconfig.get_preferred_scheme("prefix"), {"base": prefix, "platbase": prefix}
    site_dirs = list(dict.fromkeys(sysconfig.get_path(key, scheme, where) for key in ("purelib", "platlib")))
    os.environ.update(
        PIP_NO_INDEX="1",  # no network in here (and so no self-check for a newer pip either)
        PIP_FIND_LINKS=os.path.join(template, "wheelhouse"),
        PIP_PREFIX=prefix,  # the template's virtualenv is read-only
        PIP_NO_COLOR="1",
        PYTHONPATH=os.pathsep.join(site_dirs),  # for pip, and any python a cell starts
        PATH=os.environ.get("PATH", "") + os.pathsep + os.path.join(prefix, "bin"),
    )

    # After the template's own packages, so an install cannot shadow them. The folder may
    # appear only later (an install, a restored snapshot's files), and Python's own path hook
    # would refuse a missing folder once and for all: this finder waits for it.
    loaders = [
        (ExtensionFileLoader, EXTENSION_SUFFIXES),
        (SourceFileLoader, SOURCE_SUFFIXES),
        (SourcelessFileLoader, BYTECODE_SUFFIXES),
    ]

    def finder_of_packages_folder(path: str) -> FileFinder:
        if path not in site_dirs:
            raise ImportError("not the installed packages' folder", path=path)
        return FileFinder(path, *loaders)

    sys.path_hooks.insert(0, finder_of_packages_folder)
    sys.path.extend(site_dirs)

    magic: dict[str, object] = {}

    def pip(line: str) -> None:
        """Run pip here: `%pip install NAME` installs from the template's wheelhouse, offline."""
        __tracebackhide__ = True
        if not magic:
            from importlib.util import module_from_spec, spec_from_file_location

            spec = spec_from_file_location("offline_pip", os.path.join(template, "offline_pip.py"))
            magic["module"] = module = module_from_spec(spec)  # type: ignore[arg-type]
            spec.loader.exec_module(module)  # type: ignore[union-attr]
        magic["module"].pip(line)  # type: ignore[attr-defined]

    get_ipython().register_magic_function(pip, "line", "pip")  # type: ignore[name-defined]  # noqa: F821


def _tables_as_data() -> None:
    """A DataFrame or Series shown also carries its first rows as data, for the page's grid
    (data_tables.py: pandas' own table schema output has no row cap and no total count)."""
    import os
    from importlib.util import module_from_spec, spec_from_file_location

    template = os.environ.get("SANDBOX_TEMPLATE", "/opt/template")
    spec = spec_from_file_location("data_tables", os.path.join(template, "data_tables.py"))
    module = module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    module.register(get_ipython())  # type: ignore[name-defined]  # noqa: F821


def _charts_as_facts() -> None:
    """A matplotlib figure shown also carries what a reader takes from it (title, axes, traces,
    extreme points) as data, for a model that cannot see the PNG (chart_facts.py)."""
    import os
    from importlib.util import module_from_spec, spec_from_file_location

    template = os.environ.get("SANDBOX_TEMPLATE", "/opt/template")
    spec = spec_from_file_location("chart_facts", os.path.join(template, "chart_facts.py"))
    module = module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    module.register(get_ipython())  # type: ignore[name-defined]  # noqa: F821


def _connections() -> tuple[object, object]:
    """connection(), sql() and %%sql for the session's attached connections (connections.py),
    importable as _analyst_connections by the worker's silent cells. No driver loads here.
    Bound by assignment, not by an import statement: an export's implicit imports are this
    file's import statements, and this module exists only in a kernel."""
    import os
    import sys
    from importlib.util import module_from_spec, spec_from_file_location

    template = os.environ.get("SANDBOX_TEMPLATE", "/opt/template")
    spec = spec_from_file_location("_analyst_connections", os.path.join(template, "connections.py"))
    module = module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["_analyst_connections"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    module.register(get_ipython())  # type: ignore[name-defined]  # noqa: F821
    return module.connection, module.sql


_prepare_matplotlib()
_prefer_interactive_plotly()
_prepare_snapshots()
_offline_packages()
_tables_as_data()
_charts_as_facts()
connection, sql = _connections()
del _prepare_matplotlib, _prefer_interactive_plotly, _prepare_snapshots, _offline_packages, _tables_as_data
del _charts_as_facts, _connections

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402, F401
import pandas as pd  # noqa: E402


def parameter(name: str, default: object) -> object:
    """A parameter of the analysis (the app lists it, and a run sets it): ``default`` when the
    cell runs by hand, the run's value in a run."""
    return globals().get("__analyst_parameters__", {}).get(name, default)


pd.set_option("display.max_columns", 50)
pd.set_option("display.width", 160)
plt.rcParams["figure.dpi"] = 100
