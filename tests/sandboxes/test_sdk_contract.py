"""The SDK's contract end to end: real sandboxd, real driver, real kernels."""

import json
import time

from sandboxes import Execution, ExecutionError, Result


def test_state_persists_across_run_code(sandbox):
    sandbox.run_code("x = 41")
    sandbox.run_code("x += 1")
    assert sandbox.run_code("x").text == "42"


def test_last_expression_is_the_main_result(sandbox):
    execution = sandbox.run_code("print('hi')\n1 + 1")
    assert isinstance(execution, Execution)
    assert execution.text == "2"
    assert execution.stdout == "hi\n"
    assert execution.results[0].is_main_result
    assert execution.error is None
    assert execution.execution_count == 1


def test_stdout_streams_in_order_while_the_cell_runs(sandbox):
    arrivals = []
    code = "import time\nfor i in range(5):\n    print(i, flush=True)\n    time.sleep(0.3)"
    started = time.monotonic()
    execution = sandbox.run_code(code, on_stdout=lambda text: arrivals.append((text, time.monotonic())))
    finished = time.monotonic()
    assert execution.stdout == "0\n1\n2\n3\n4\n"
    assert "".join(text for text, _ in arrivals) == execution.stdout
    first_arrival = arrivals[0][1]
    assert first_arrival - started < (finished - started) / 2, "the first line came only at the end"


def test_stderr_is_kept_apart(sandbox):
    execution = sandbox.run_code("import sys; print('out'); print('err', file=sys.stderr)")
    assert execution.stdout == "out\n"
    assert execution.stderr == "err\n"


def test_matplotlib_chart_arrives_as_png_without_savefig(sandbox):
    seen = []
    execution = sandbox.run_code(
        "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('t')\nplt.show()",
        on_result=seen.append,
    )
    assert execution.error is None
    assert execution.png is not None
    import base64

    assert base64.b64decode(execution.png).startswith(b"\x89PNG\r\n\x1a\n")
    assert seen and isinstance(seen[0], Result) and seen[0].png == execution.png
    assert "image/png" in seen[0].bundle


def test_dataframe_arrives_as_html(sandbox):
    execution = sandbox.run_code("pd.DataFrame({'city': ['Oslo', 'Lima'], 'sales': [3, 5]})")
    assert "<table" in execution.html
    assert "Oslo" in execution.html
    assert "Oslo" in execution.text


def test_plotly_figure_arrives_as_json(sandbox):
    execution = sandbox.run_code("import plotly.express as px\npx.bar(x=['a', 'b'], y=[1, 2])")
    assert execution.error is None
    [result] = execution.results
    figure = result.plotly
    assert figure is not None, result.formats()
    assert figure["data"][0]["type"] == "bar"
    json.dumps(figure)


def test_traceback_becomes_execution_error(sandbox):
    errors = []
    execution = sandbox.run_code("def f():\n    return 1 / 0\nf()", on_error=errors.append)
    assert isinstance(execution.error, ExecutionError)
    assert execution.error.name == "ZeroDivisionError"
    assert execution.error.value == "division by zero"
    assert "f()" in execution.error.traceback
    assert "\x1b[" not in execution.error.traceback
    assert errors == [execution.error]


def test_state_survives_an_error(sandbox):
    sandbox.run_code("y = 5")
    sandbox.run_code("raise ValueError('boom')")
    assert sandbox.run_code("y").text == "5"


def test_uploaded_csv_is_readable_by_code(sandbox):
    sandbox.files.write("data/sales.csv", "region,amount\nnorth,10\nsouth,32\n")
    execution = sandbox.run_code("df = pd.read_csv('data/sales.csv'); int(df.amount.sum())")
    assert execution.text == "42"


def test_files_written_by_code_can_be_read_and_listed(sandbox):
    sandbox.run_code(
        "import os; os.makedirs('outputs'); open('outputs/report.csv', 'w').write('a,b\\n1,2\\n')"
    )
    assert sandbox.files.read("outputs/report.csv") == "a,b\n1,2\n"
    entries = {e.path: e for e in sandbox.files.list("outputs")}
    assert entries["outputs/report.csv"].type == "file"
    assert entries["outputs/report.csv"].size == 8


def test_code_contexts_do_not_share_variables(sandbox):
    other = sandbox.create_code_context()
    sandbox.run_code("secret = 1")
    assert other.run_code("secret").error.name == "NameError"
    other.run_code("open('shared.txt', 'w').write('files are shared')")
    assert sandbox.run_code("open('shared.txt').read()").text == "'files are shared'"


def test_connect_reaches_the_same_kernel(sandbox, sandboxd):
    from sandboxes import Sandbox

    sandbox.run_code("z = 'kept'")
    again = Sandbox.connect(sandbox.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    assert again.run_code("z").text == "'kept'"
    again.close()


def test_metadata_is_kept_and_listed(make_sandbox, sandboxd):
    from sandboxes import Sandbox

    sandbox = make_sandbox(metadata={"session": "abc"})
    listed = Sandbox.list({"session": "abc"}, url=sandboxd.url, token=sandboxd.token)
    assert [info.sandbox_id for info in listed] == [sandbox.sandbox_id]
    assert sandbox.metadata == {"session": "abc"}
