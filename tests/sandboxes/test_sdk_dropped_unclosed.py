"""A Sandbox dropped without close(), as after kill(), closes its connection to sandboxd when it is
collected: its socket never reaches the garbage collector open (a ResourceWarning there, which fails
whichever test is running when the collector gets to it)."""

import gc
import warnings

from sandboxes import Sandbox


def test_a_killed_sandbox_dropped_unclosed_leaves_no_open_socket(sandboxd):
    sandbox = Sandbox.create(url=sandboxd.url, token=sandboxd.token)
    assert sandbox.run_code("1 + 1").text == "2"
    sandbox.kill()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del sandbox
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
