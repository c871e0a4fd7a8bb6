"""A cell whose execute_reply reaches sandboxd before its idle status (ipykernel sends the reply
on shell, then the status through its iopub thread) ends as a whole cell: no "output was lost"."""

from __future__ import annotations

# Holds every later cell's idle status back 0.3 s after its reply has gone out on shell (well
# under the 1 s sandboxd waits on a silent iopub after a reply), so sandboxd always holds the
# reply while it still waits for the idle status: the order two cells of every run of 60 real
# notebooks met by chance.
DELAY_IDLE = """
import time
kernel = get_ipython().kernel
publish = kernel._publish_status
def _late_idle(status, *args, **kwargs):
    if status == "idle":
        time.sleep(0.3)
    return publish(status, *args, **kwargs)
kernel._publish_status = _late_idle
"""


def test_a_reply_before_its_idle_status_loses_nothing(sandbox):
    assert sandbox.run_code(DELAY_IDLE).error is None
    for n in range(3):
        execution = sandbox.run_code(f"print('cell {n}'); {n} * 7")
        assert execution.error is None
        assert execution.stdout == f"cell {n}\n"
        assert execution.text == str(n * 7)
        assert execution.stderr == "", execution.stderr
