"""Columns proposed as sensitive: e-mail addresses, phone numbers, IBANs (check digits right) and
national ids (valid US SSNs, UK NI numbers); ordinary text is not."""

import pytest

from analyst.trust.sensitive_columns import is_iban, is_national_id, kind_of, proposed_marks


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        (["ann@example.com", "bo.lee+x@mail.co.uk", "c_d@sub.example.org"], "email"),
        (["+44 20 7946 0958", "(555) 123-4567", "030 1234567"], "phone"),
        (["GB82 WEST 1234 5698 7654 32", "DE89370400440532013000", "FR1420041010050500013M02606"], "iban"),
        (["123-45-6789", "234-56-7890", "345-67-8901"], "national_id"),
        (["AB123456C", "AB 12 34 56 A", "JG103759A"], "national_id"),
        (["north", "south", "east"], None),
        (["2024-01-05", "2024-02-07", "2023-12-31"], None),
        (["12.5", "130.25", "7.75"], None),
        (["ann@example.com", "not an address", "neither"], None),  # most must look the part
        (["ann@example.com", "bo@example.com"], None),  # too few to tell
    ],
)
def test_a_columns_kind_is_told_from_its_values(values, kind):
    assert kind_of(values) == kind


def test_an_iban_needs_its_check_digits_right():
    assert is_iban("GB82 WEST 1234 5698 7654 32")
    assert not is_iban("GB83 WEST 1234 5698 7654 32")


@pytest.mark.parametrize("value", ["000-12-3456", "666-12-3456", "912-34-5678", "123-00-4567", "123-45-0000"])
def test_numbers_the_ssa_never_issues_are_not_national_ids(value):
    assert not is_national_id(value)


def test_proposals_leave_out_columns_the_user_decided_on():
    description = {
        "tables": [
            {
                "path": "data/people.csv",
                "sheet": None,
                "values": {"email": ["a@b.io", "c@d.io", "e@f.io"], "city": ["Oslo", "Rome", "Lima"]},
            }
        ]
    }
    assert proposed_marks(description, "data/people.csv", decided={}) == {"": {"email": "email"}}
    decided = {"": {"email": "ordinary"}}
    assert proposed_marks(description, "data/people.csv", decided=decided) == {}
