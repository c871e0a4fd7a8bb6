"""A kernel that dies yields a plain error; the context comes back fresh; others are untouched."""

import pytest


@pytest.mark.parametrize(
    "crash",
    [
        "import os; os._exit(3)",
        "import ctypes; ctypes.string_at(0)",  # segfault
        "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
    ],
    ids=["os._exit", "segfault", "sigkill"],
)
def test_dead_kernel_is_reported_and_replaced(make_sandbox, crash):
    sandbox = make_sandbox()
    bystander = make_sandbox()
    bystander.run_code("kept = 'yes'")
    sandbox.run_code("x = 1")

    execution = sandbox.run_code(crash)

    assert execution.error is not None
    assert execution.error.name == "KernelDied"
    assert "kernel died" in execution.error.value
    assert "restarted" in execution.error.value
    assert sandbox.run_code("x").error.name == "NameError", "a restarted kernel starts empty"
    assert sandbox.run_code("2 + 2").text == "4"
    assert bystander.run_code("kept").text == "'yes'"


def test_files_survive_a_kernel_death(sandbox):
    sandbox.files.write("data/keep.csv", "a\n1\n")
    sandbox.run_code("import os; os._exit(1)")
    assert sandbox.run_code("open('data/keep.csv').read()").text == "'a\\n1\\n'"


def test_restart_clears_state_but_keeps_files(sandbox):
    sandbox.run_code("v = 3; open('f.txt', 'w').write('x')")
    sandbox.default_context.restart()
    assert sandbox.run_code("v").error.name == "NameError"
    assert sandbox.files.read("f.txt") == "x"
