"""sandboxd starts each kernel through its own launcher (kernel_launcher.py) in place of
``python -m ipykernel_launcher``, under bubblewrap and from the fork server alike: the kernel is
the same to the user (their own modules import from the workdir, the runtime folder is not on
the path), and its publisher's queue was bounded before it bound."""

from __future__ import annotations

import pytest

from sandboxes.drivers.base import SANDBOX_RUNTIME
from tests.sandboxes.bwrap_service import needs_root
from tests.sandboxes.test_escape import probe

LOOK = """
import sys, zmq
with open('mine.py', 'w') as module:
    module.write('ANSWER = 42\\n')
import mine
publisher = get_ipython().kernel.iopub_thread.socket
observed = {
    'answer': mine.ANSWER,
    'path': sys.path,
    'argv': sys.argv,
    'queue': publisher.getsockopt(zmq.SNDHWM),
    'forked': b'kernel_launcher' not in open('/proc/self/cmdline', 'rb').read(),  # the zygote's
}
"""


@needs_root
@pytest.mark.parametrize("launched", ["forked", "bwrap"])
def test_a_launched_kernel_is_ipykernel_with_a_bounded_publisher(launched, make_sandbox, request):
    make = make_sandbox if launched == "forked" else request.getfixturevalue("make_bwrap_sandbox")
    observed = probe(make(), LOOK)
    assert observed["answer"] == 42
    assert not any(entry.startswith(SANDBOX_RUNTIME) for entry in observed["path"]), observed["path"]
    assert observed["argv"][0] == f"{SANDBOX_RUNTIME}/kernel_launcher.py", observed["argv"]
    assert observed["queue"] == 64
    assert observed["forked"] == (launched == "forked")
