"""A cell that closes its kernel's own sockets: the next cell restarts the kernel, runs, and says so."""

import pytest

from tests.conftest import sandbox_maker
from tests.sandboxes.gvisor_service import needs_runsc

# Each closes what the kernel takes cells on (ipykernel's own attributes, read from a live kernel).
CLOSINGS = {
    "shell": "get_ipython().kernel.shell_stream.close()",
    "control and shell": "k = get_ipython().kernel; k.control_stream.close(); k.shell_stream.close()",
}


@pytest.mark.parametrize("closing", CLOSINGS.values(), ids=CLOSINGS.keys())
def test_next_cell_restarts_a_kernel_that_stopped_answering(sandbox, closing):
    sandbox.files.write("kept.txt", "on disk")
    sandbox.run_code("x = 1")
    sandbox.run_code(closing, timeout=15)

    # The old code ended this cell with a KernelDied error after restarting: the cell never ran.
    execution = sandbox.run_code("print(open('kept.txt').read()); 6 * 7", timeout=15)

    assert execution.error is None, execution.error
    assert execution.text == "42"
    assert "on disk" in execution.stdout
    assert "stopped answering" in execution.stderr
    assert "this cell ran on the new kernel" in execution.stderr
    assert sandbox.run_code("x").error.name == "NameError", "the kernel was restarted, empty"
    assert sandbox.run_code("2 + 2").text == "4"


def test_a_cell_that_closes_its_publisher_restarts_the_kernel(sandbox):
    sandbox.run_code("x = 1")

    closing = sandbox.run_code("get_ipython().kernel.iopub_socket.close()", timeout=15)

    # The old code lost every later cell's output ("output was lost", no result), for good.
    assert "stopped answering" in closing.stderr
    assert "restarted" in closing.stderr
    execution = sandbox.run_code("print('out'); 6 * 7", timeout=15)
    assert execution.error is None, execution.error
    assert execution.text == "42"
    assert execution.stdout == "out\n"
    assert sandbox.run_code("x").error.name == "NameError", "the kernel was restarted, empty"
    assert sandbox.run_code("2 + 2").text == "4"


@pytest.mark.slow  # the bubblewrap test above is in make test; this twin in make test-slow
@needs_runsc
def test_a_kernel_that_closed_its_shell_comes_back_under_gvisor(gvisor_sandboxd):
    with sandbox_maker(gvisor_sandboxd) as make:
        sandbox = make()
        sandbox.run_code(CLOSINGS["shell"], timeout=15)

        execution = sandbox.run_code("6 * 7", timeout=30)

        assert execution.error is None, execution.error
        assert execution.text == "42"
        assert "this cell ran on the new kernel" in execution.stderr
