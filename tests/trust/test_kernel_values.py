"""The text values a schema-mode cell's tables hold, read from a real kernel through sandboxd's
inspection and from the tables a cell displays: text columns only, every table of the namespace,
and what was displayed when the kernel cannot be read."""

from __future__ import annotations

from analyst.trust.kernel_values import gathered
from sandboxes import Result

CODE = """
import pandas as pd
people = pd.DataFrame({"name": ["Odalys Vantreight", "Brannock Okonkwo"], "age": [41, 52]})
cities = pd.Series(["Quillonbury", "Farrowdale"], name="city")
note = "not a table: Ystradmore"
people
"""


def test_the_text_values_of_every_table_the_kernel_holds(sandbox):
    execution = sandbox.run_code(CODE)
    assert execution.error is None, execution.error
    values = gathered(sandbox, execution.results)
    assert values == {
        "Odalys Vantreight": "name",
        "Brannock Okonkwo": "name",
        "Quillonbury": "city",
        "Farrowdale": "city",
    }, "names and cities, not the ages, nor a string that is no table's"


def test_without_a_kernel_what_the_cell_displayed():
    resource = {
        "schema": {"fields": [{"name": "index", "type": "integer"}, {"name": "email", "type": "string"}]},
        "data": [{"index": 0, "email": "ann@vell.io"}, {"index": 1, "email": None}],
    }
    shown = Result(bundle={}, data=resource)
    assert gathered(None, [shown, Result(bundle={}, text="ann@vell.io")]) == {"ann@vell.io": "email"}
