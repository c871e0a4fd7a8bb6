"""Runs in the sandbox template's own Python (a subprocess of the tests, on the host): an IPython
shell that has run the template's startup.py, answering one JSON line per cell read from stdin.

    in:  {"code": "..."}
    out: {"stdout": "...", "stderr": "...", "error": null | {"type", "message"}}"""

import contextlib
import io
import json
import os
import sys

from IPython.core.interactiveshell import InteractiveShell

answers = sys.stdout
shell = InteractiveShell.instance(colors="nocolor")
startup = os.path.join(os.environ["SANDBOX_TEMPLATE"], "startup.py")
with open(startup) as file:
    started = shell.run_cell(file.read(), silent=True)
started.raise_error()
shell.user_ns_hidden.update(shell.user_ns)  # as a kernel's exec_files leave them

for line in sys.stdin:
    code = json.loads(line)["code"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        result = shell.run_cell(code, store_history=True)
    failure = result.error_in_exec or result.error_before_exec
    error = failure and {"type": type(failure).__name__, "message": str(failure)}
    answers.write(json.dumps({"stdout": out.getvalue(), "stderr": err.getvalue(), "error": error}) + "\n")
    answers.flush()
