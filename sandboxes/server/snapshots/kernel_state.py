"""Save and load a kernel's namespace with dill. This file runs *inside* the kernel.

sandboxd sends its source as a silent cell (see service.py), so everything untrusted is
pickled and unpickled by the sandbox's own Python, never by ours. It imports nothing of this
project. Each call prints one line: ``REPORT_PREFIX`` followed by a JSON report.
"""

import json
import os
import re
import signal
import sys
import time

REPORT_PREFIX = "@@sandbox-state@@ "
# IPython's own names: output history (_, __, _1, _i1, _oh...), dunders, In/Out, exit/quit.
IPYTHON_NAMES = re.compile(r"^(_+|_i+\d*|_\d+|_[iod]h|__.*__)$")
IPYTHON_OBJECTS = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
# sandboxd refuses a report beyond these (state_report.py): a variable of a longer or odd name
# (set through globals()) is not saved, and at most this many unsaved ones are named.
MAX_NAME_CHARS = 200
MAX_UNSAVED = 1000
# A variable estimated this large is pickled alone, so that a restore need not wait for it.
LARGE_BYTES = 16 << 20
TRAVERSAL_BUDGET = 200_000
NOT_KEPT_MODULE = "__sandbox_not_kept__"  # set by the template (code-interpreter/connections.py)
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Once a load's time is up, the alarm rings again this often until the unpickling gives way (a
# __setstate__ that catches the first one is stopped by the next).
OVERTIME_REPEAT = 0.05


class _TooLarge(Exception):
    pass


class _Overtime(BaseException):
    """Raised into a load whose time is up: a BaseException, so ``except Exception`` keeps none."""


class _CappedWriter:
    """A file that refuses to grow past ``limit`` bytes."""

    def __init__(self, stream, limit):
        self.stream = stream
        self.limit = limit
        self.written = 0

    def write(self, data):
        self.written += memoryview(data).nbytes
        if self.written > self.limit:
            raise _TooLarge
        return self.stream.write(data)


class _Discard:
    def write(self, data):
        return memoryview(data).nbytes


def _report(**fields):
    print(REPORT_PREFIX + json.dumps(fields), flush=True)


def _user_names(namespace, hidden):
    for name, value in namespace.items():
        if not isinstance(name, str) or not name.isidentifier() or len(name) > MAX_NAME_CHARS:
            continue
        if IPYTHON_NAMES.match(name) or name in IPYTHON_OBJECTS:
            continue
        if name in hidden and hidden[name] is value:
            continue
        yield name


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _describe(exc):
    return CONTROL.sub(" ", f"{type(exc).__name__}: {exc}")[:300]


def save(path, limit, drop_unpicklable=False):
    """Pickle every user variable into ``path`` (a named pipe sandboxd reads). What cannot be
    pickled fails the attempt, reported as "unpicklable": the bytes already in the pipe cannot
    be taken back, so sandboxd discards them and asks again with ``drop_unpicklable``, which
    leaves those variables out and names them.

    The file holds consecutive pickles, each a dict of variables ("parts"): first each variable
    that is not large as a part of its own, all written by one pickler (so that two names for one
    object stay one object; "eager" says where each begins in its memo), then each large one
    alone, with a memo of its own, so a restore can load the others later, when a cell needs them.
    A restore that stops a slow part's unpickling can so go on with the next one."""
    shell = get_ipython()  # noqa: F821 (the kernel's builtin)
    namespace = shell.user_ns
    state = {name: namespace[name] for name in _user_names(namespace, shell.user_ns_hidden)}
    unsaved = _drop_not_kept(state)
    unsaved.update(_drop_unpicklable(state) if drop_unpicklable else {})
    try:
        parts, eager = _dump(state, path, limit, _deferrable(state, namespace))
    except _TooLarge:
        _report(error="too_large", limit=limit)
    except OSError as exc:
        _report(error="failed", message=_describe(exc))
    except Exception as exc:
        _report(error="failed" if drop_unpicklable else "unpicklable", message=_describe(exc))
    else:
        size = sum(part["size"] for part in parts)
        _report(saved=sorted(state), unsaved=unsaved, size=size, parts=parts, eager=eager)


def _dump(state, path, limit, deferred):
    """The parts written ({"names", "size"} each, in order), and for the leading ones written by
    the shared pickler, the size of its memo where each begins."""
    shared = sorted(name for name in state if name not in deferred) or [None]
    parts, eager = [], []
    with open(path, "wb") as stream:
        capped = _CappedWriter(stream, limit)
        pickler = _pickler()(capped, protocol=5)
        for name in shared:
            eager.append(len(getattr(pickler, "memo", ())))  # dill's, or one a cell put in its place
            parts.append(_write(pickler, capped, {} if name is None else {name: state[name]}))
        for name in sorted(deferred):
            parts.append(_write(_pickler()(capped, protocol=5), capped, {name: state[name]}))
    return parts, eager


def _write(pickler, capped, group):
    start = capped.written
    pickler.dump(group)
    return {"names": sorted(group), "size": capped.written - start}


def _deferrable(state, namespace):
    """The large variables a restore may load later: none that a function or class of the
    user's names (it would find it missing), nor any that another saved object holds (one
    pickle of its own would make two objects of it)."""
    large = {name for name, value in state.items() if _estimated_bytes(value) >= LARGE_BYTES}
    if not large:
        return set()
    large -= _names_code_refers_to(state.values())
    if not large:
        return set()
    return large - _held_by_others(state, large, namespace)


def _held_by_others(state, large, namespace):
    """The names in ``large`` whose value another saved value reaches, looking through at most
    TRAVERSAL_BUDGET objects (past that, all of them: nothing is deferred)."""
    import gc
    import types

    targets = {id(state[name]): name for name in large}
    seen = {id(namespace), id(state)}  # a function's globals: the namespace itself
    stack = [value for name, value in state.items() if name not in large]
    held = set()
    budget = TRAVERSAL_BUDGET
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if id(value) in targets:
            held.add(targets[id(value)])
            continue
        budget -= 1
        if budget < 0:
            return set(large)
        if isinstance(value, (str, bytes, int, float, complex, bool, types.ModuleType)) or value is None:
            continue
        stack.extend(gc.get_referents(value))
    return held


def _estimated_bytes(value):
    try:
        if type(value).__name__ == "DataFrame" and hasattr(value, "memory_usage"):
            return int(value.memory_usage(index=True, deep=False).sum())
        nbytes = getattr(value, "nbytes", None)  # numpy arrays, pandas Series and Index
        if isinstance(nbytes, int):
            return nbytes
    except Exception:
        return 0
    if isinstance(value, (bytes, bytearray, str)):
        return len(value)
    return 0


def _names_code_refers_to(values):
    """Every global name the user's functions and classes (and code nested in them) use."""
    import types

    names, seen = set(), set()

    def visit(code):
        if id(code) in seen:
            return
        seen.add(id(code))
        names.update(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                visit(const)

    def look(value):
        function = getattr(value, "__func__", value)
        code = getattr(function, "__code__", None)
        if isinstance(code, types.CodeType):
            visit(code)
        elif isinstance(value, type):
            for member in vars(value).values():
                look(member)

    for value in values:
        try:
            look(value)
        except Exception:  # noqa: S112 (an object that cannot be looked into names nothing)
            continue
    return names


def _pickler():
    """dill's Pickler, writing large buffers (numpy arrays, pandas blocks) straight from memory.
    dill extends the pure-Python pickler, which copies each buffer before writing it (the C one
    does not): saving an array took as much memory again as the array, so a kernel holding more
    than half its memory limit in one array was killed by the snapshot meant to keep it. The
    opcodes are the standard ones (any unpickler reads them), written outside frames as the
    pickle module does for large bytes."""
    import pickle
    import struct

    import dill

    def save_picklebuffer(pickler, obj):
        with obj.raw() as raw:
            large = raw.nbytes >= pickler.framer._FRAME_SIZE_TARGET  # small ones stay in frames
            if large and pickler.proto >= 5 and pickler._buffer_callback is None and raw.contiguous:
                opcode = pickle.BINBYTES8 if raw.readonly else pickle.BYTEARRAY8
                pickler._write_large_bytes(opcode + struct.pack("<Q", raw.nbytes), raw)
                return
        pickle._Pickler.save_picklebuffer(pickler, obj)

    class Pickler(dill.Pickler):
        dispatch = type(dill.Pickler.dispatch)(dill.Pickler.dispatch)  # its type: dill's lookup
        dispatch[pickle.PickleBuffer] = save_picklebuffer

    return Pickler


def _drop_unpicklable(state):
    """Remove what cannot be pickled from ``state``; {name: why} of what was removed."""
    pickler = _pickler()
    dropped = {}
    for name in sorted(state):
        try:
            pickler(_Discard(), protocol=5).dump(state[name])  # a trial: keep no copy of the bytes
        except Exception as exc:
            if len(dropped) < MAX_UNSAVED:
                dropped[name] = _describe(exc)
            del state[name]
    return dropped


def _drop_not_kept(state):
    """Remove what the kernel's own code says must never be saved (the template's connections,
    which hold secrets) from ``state``; {name: why} of what was removed. The kernel names it
    through sys.modules[NOT_KEPT_MODULE].reason(value) -> str | None."""
    reason = getattr(sys.modules.get(NOT_KEPT_MODULE), "reason", None)
    dropped = {}
    if reason is None:
        return dropped
    for name in sorted(state):
        try:
            why = reason(state[name])
            why = CONTROL.sub(" ", str(why))[:300] if why else None
        except Exception:  # a hook a cell broke decides nothing
            why = None
        if why:
            if len(dropped) < MAX_UNSAVED:
                dropped[name] = why
            del state[name]
    return dropped


def _forget_workdir_modules(names):
    """Forget the modules of ``names`` imported from the workdir (sandboxd may have been writing
    their files back): a load tried again imports them afresh. Others, such as the template's
    extension modules, cannot be imported twice."""
    home = os.path.join(os.environ.get("HOME", os.getcwd()), "")
    for name in names:
        module = sys.modules.get(name)
        where = [getattr(module, "__file__", None) or "", *getattr(module, "__path__", [])]
        if any(str(folder).startswith(home) for folder in where):
            del sys.modules[name]


def _unpickler(stream):
    """dill's, except that a file object comes back without writing to its file. dill reopens a
    saved file object in its mode, even a closed one: "w" emptied the user's file at every
    restore (a resume, a fork), and "x" refused the whole namespace. Reopened without
    truncating, as dill's CONTENTS_FMODE does, it keeps its position."""
    import dill
    from dill import _dill

    def reopen(*saved):  # name, mode, position, closed, open, strictio, fmode, fdata
        *handle, _fmode, fdata = saved
        return _dill._create_filehandle(*handle, dill.CONTENTS_FMODE, fdata)

    class Unpickler(dill.Unpickler):
        def find_class(self, module, name):
            if (module, name) == ("dill._dill", "_create_filehandle"):
                return reopen
            return super().find_class(module, name)

    return Unpickler(stream)


class _Window:
    """At most ``left`` bytes of ``stream``: one part, so that an unpickling stopped midway can be
    skipped to the end of its part. It has no ``peek``: the unpickler reads no further ahead."""

    def __init__(self, stream):
        self.stream = stream
        self.left = 0

    def read(self, size=-1):
        size = self.left if size is None or size < 0 else min(size, self.left)
        data = self.stream.read(size)
        self.left -= len(data)
        return data

    def readinto(self, buffer):
        view = memoryview(buffer).cast("B")[: self.left]
        got = self.stream.readinto(view) or 0
        self.left -= got
        return got

    def readline(self, size=-1):
        size = self.left if size is None or size < 0 else min(size, self.left)
        data = self.stream.readline(size)
        self.left -= len(data)
        return data

    def skip(self):
        while self.left and self.read(min(self.left, 1 << 20)):
            pass


class _Alarm:
    """SIGALRM at a deadline, raising _Overtime into whatever runs then, for as long as it is armed."""

    def __init__(self):
        self.armed = False
        self.previous = None

    def _ring(self, signum, frame):
        if self.armed:
            raise _Overtime

    def __enter__(self):
        self.previous = signal.signal(signal.SIGALRM, self._ring)
        return self

    def arm(self, seconds):
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001), OVERTIME_REPEAT)

    def disarm(self):
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.armed = False

    def __exit__(self, *exc):
        self.disarm()
        signal.signal(signal.SIGALRM, self.previous or signal.SIG_DFL)


def load(path, layout, limit=None):
    """Unpickle the parts of ``layout`` ([names, size, memo], in the order written) from ``path``
    into the user's namespace, then delete it. A part with a ``memo`` (where it begins in the memo
    it shares with the parts before it) is bounded: all of them together get ``limit`` seconds, one
    at most half of that, so that one slow part cannot keep out all the others. A part still
    unpickling when its time is up is stopped and left out, and so is every bounded part once the
    limit is reached; their variables are named in the report's "late". Large parts (no memo)
    are not bounded."""
    import importlib

    # Folders on the path may have been listed while they were being written (a listing is kept
    # until the folder's mtime changes, which can miss writes within one clock tick).
    importlib.invalidate_caches()
    imported = set(sys.modules)
    state, late = {}, []
    deadline = None if limit is None else time.monotonic() + limit
    try:
        with open(path, "rb") as stream, _Alarm() as alarm:
            window = _Window(stream)
            unpickler = _unpickler(window)  # we are the sandbox's kernel: its own data
            stopped = False
            for names, size, memo in layout:
                window.left = size
                if memo is None:  # a large part, pickled alone: a memo of its own
                    state.update(_part(_unpickler(window)))
                elif deadline is not None and time.monotonic() >= deadline:
                    late += names
                elif not _bounded(unpickler, alarm, _part_deadline(deadline, limit), state, stopped):
                    late += names
                    stopped = True
                    # A fresh unpickler (the stopped one may hold the rest of a frame), with the
                    # memo as it was before the part: a later part that shares an object the
                    # stopped one was making fails to load (and is left out too), rather than
                    # get it half made.
                    kept = {key: value for key, value in unpickler.memo.copy().items() if key < memo}
                    unpickler = _unpickler(window)
                    unpickler.memo = kept
                window.skip()
    except Exception as exc:
        _forget_workdir_modules(set(sys.modules) - imported)
        _report(error="failed", message=_describe(exc))
        return
    finally:
        _remove(path)
    get_ipython().user_ns.update(state)  # noqa: F821
    _report(restored=sorted(state), late=sorted(late))


def _part_deadline(deadline, limit):
    if deadline is None:
        return None
    return min(deadline, time.monotonic() + limit / 2)


def _bounded(unpickler, alarm, deadline, state, after_stop):
    """Load one part into ``state`` before ``deadline`` (None: however long it takes); False if
    its time ran out first (what it had made is left half made, out of the namespace), or if it
    failed ``after_stop``, when it may have needed an object of a part that was stopped."""
    try:
        if deadline is not None:
            alarm.arm(deadline - time.monotonic())
        try:
            part = _part(unpickler)
        finally:
            alarm.disarm()
    except _Overtime:
        return False
    except Exception:
        if after_stop:
            return False
        raise
    state.update(part)
    return True


def _part(unpickler):
    part = unpickler.load()
    if not isinstance(part, dict):
        raise TypeError("the saved state is not a namespace")
    return part
