"""A cell's output is capped (64 KiB in tests) with a visible marker; the kernel stays usable."""


def test_stdout_is_truncated_with_a_marker(sandbox):
    execution = sandbox.run_code("for i in range(20000): print('line', i)")
    assert len(execution.stdout.encode()) <= 64 * 1024
    assert execution.stdout.startswith("line 0\n")
    assert "[output truncated" in execution.stderr
    assert "line 19999" not in execution.stdout
    assert sandbox.run_code("print('after')").stdout == "after\n"


def test_output_under_the_cap_is_whole(sandbox):
    execution = sandbox.run_code("print('x' * 1000)")
    assert execution.stdout == "x" * 1000 + "\n"
    assert "truncated" not in execution.stderr
