"""Known values found in text as whole words, case aside, and replaced by their column's name."""

import random
import string
import time

from analyst.trust.value_matcher import ValueMatcher


def test_values_are_replaced_by_their_column_as_whole_words_ignoring_case():
    matcher = ValueMatcher({"Ann Lee": "name", "Annabel": "name", "ann@x.org": "email", "Bob": "name"})
    text, found = matcher.redact("Ann Lee <ann@x.org>; ANNABEL, bob and Bobby; Annual report")
    assert text == "«col:name» <«col:email»>; «col:name», «col:name» and Bobby; Annual report"
    assert found == {"name": 3, "email": 1}


def test_the_longest_value_wins_where_one_starts_another():
    matcher = ValueMatcher({"New York": "city", "New York City": "place"})
    assert matcher.redact("New York City and New York")[0] == "«col:place» and «col:city»"


def test_a_long_value_is_found_as_pandas_prints_it_cut():
    address = "Flat 4, 17 Harrowgate Crescent, Little Wexcombe, North Yorkshire"
    printed = f"0    {address[:47]}...\n1    other"
    assert ValueMatcher({address: "address"}).redact(printed)[0] == "0    «col:address»\n1    other"


def test_short_values_and_an_empty_set_match_nothing():
    assert ValueMatcher({"AB": "code", "x": "code"}).redact("AB x") == ("AB x", {})
    assert not ValueMatcher({})
    assert ValueMatcher({}).redact("anything")[0] == "anything"


def test_regex_characters_in_values_are_literal():
    matcher = ValueMatcher({"a.b (c)*": "odd", "+44 20 7946 0958": "phone"})
    assert matcher.redact("call +44 20 7946 0958 re a.b (c)* not aXb (c)")[0] == (
        "call «col:phone» re «col:odd» not aXb (c)"
    )


def test_fifty_thousand_values_scan_a_large_output_quickly():
    rng = random.Random(7)
    values = {"".join(rng.choices(string.ascii_letters, k=rng.randint(5, 30))): "c" for _ in range(50_000)}
    matcher = ValueMatcher(values)
    chosen = rng.sample(sorted(values), 1000)
    text = " ".join(chosen) + " unrelated words" * 10_000
    started = time.monotonic()
    redacted, found = matcher.redact(text)
    assert time.monotonic() - started < 2
    assert found == {"c": 1000} and not any(value in redacted for value in chosen)
