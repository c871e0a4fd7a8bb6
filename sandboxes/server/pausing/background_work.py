"""Name the threads the user started. This file runs *inside* the kernel, as a silent cell.

A thread is the kernel's own when its class, or the function it runs, comes from the packages
that make up the kernel (ipykernel's IOPub, heartbeat and control threads, IPython's history
saver); any other live thread was started by the user's code, on purpose or by a library it
called. sandboxd does not pause a kernel while one runs. ``report`` prints one line:
``REPORT_PREFIX`` and a JSON list of their names.
"""

import json
import threading

REPORT_PREFIX = "@@background-work@@ "
KERNEL_PACKAGES = frozenset({"ipykernel", "IPython", "zmq", "jupyter_client", "tornado", "traitlets"})
MAX_NAMES = 20


def _origin(thread):
    if type(thread) is not threading.Thread:
        return type(thread).__module__
    return getattr(getattr(thread, "_target", None), "__module__", None) or ""


def user_threads():
    names = []
    for thread in threading.enumerate():
        if thread is threading.main_thread() or not thread.is_alive():
            continue
        if _origin(thread).split(".")[0] in KERNEL_PACKAGES:
            continue
        names.append(str(thread.name)[:100])
    return names[:MAX_NAMES]


def report():
    print(REPORT_PREFIX + json.dumps(user_threads()), flush=True)
