"""The distinct values of a table's text columns, kept by the describer for the worker (which keeps
them from the model, analyst.trust.privacy): text columns only, each value once, at most
``text_values`` per table shared between the columns, values too short or too long left out."""

from __future__ import annotations


def test_the_text_columns_values_are_kept_once_each(describe):
    content = (
        b"name,email,amount,code\n"
        b"Ann Vell,ann@vell.io,3,ab\nBo Rask,bo@rask.io,4,cd\nAnn Vell,ann@vell.io,5,ef\n"
    )
    table = describe("people.csv", content).table
    assert table["values"] == {
        "name": ["Ann Vell", "Bo Rask"],
        "email": ["ann@vell.io", "bo@rask.io"],
        "code": [],  # two letters: too short to find in text without matching inside words
    }


def test_the_values_are_bounded_per_table(describe):
    rows = "".join(f"customer-{i:05d},city {i},{i}{'x' * 100}\n" for i in range(3000))
    table = describe("many.csv", ("who,city,note\n" + rows).encode(), limits={"text_values": 1000}).table
    assert [len(values) for values in table["values"].values()] == [333, 333, 0]
    assert table["values"]["who"][:2] == ["customer-00000", "customer-00001"]
