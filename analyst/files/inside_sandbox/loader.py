"""The cell's first part: the function that makes the describer's modules a package in the kernel.

analyst.files.describer_cell.describer_source sends this file, a call of ``_load_package`` with the
sources of describe.py and the modules it imports, and ``del _load_package``: the cell binds only
the ``main`` it takes from the package (and ``json``). In the package the modules import one
another relatively (``from .report import Refused``), as in this folder, and find one another in
``sys.modules`` under a name no user's code has (describer_cell.PACKAGE).
"""


def _load_package(package: str, modules: dict[str, str]):
    """The package ``package``, made of ``modules`` (name: source, each after those it imports),
    put in ``sys.modules`` in place of an earlier run's."""
    import importlib.machinery
    import importlib.util
    import linecache
    import sys

    # list() copies sys.modules at once (the comprehension alone would read it while a thread imports)
    for name in [name for name in list(sys.modules) if name == package or name.startswith(f"{package}.")]:
        del sys.modules[name]
    spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
    sys.modules[package] = parent = importlib.util.module_from_spec(spec)
    for name, source in modules.items():
        filename = f"<{package}/{name}.py>"
        spec = importlib.machinery.ModuleSpec(f"{package}.{name}", None, origin=filename)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks
        exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)  # noqa: S102
        setattr(parent, name, module)
    return parent
