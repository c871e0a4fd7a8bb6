"""What counts as a figure of an answer, and how figures are matched against outputs' numbers."""

import pytest

from analyst.trust.citations import citations, figures, marked, output_text, strip_markers


def shown(answer: str) -> list[str]:
    return [figure.text for figure in figures(answer)]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Revenue was $1,234.56, up 12.3% on a base of 1.2 million.", ["$1,234.56", "12.3%", "1.2 million"]),
        ("It fell by -4.5 points and 3.2M rows were read; 1.5bn in all.", ["-4.5", "3.2M", "1.5bn"]),
        ("The mean is 0.87 and the median .5; 250 customers left.", ["0.87", ".5", "250"]),
        ("Sales rose 7 percent, or 1.5 percentage points.", ["7 percent", "1.5 percentage points"]),
        ("It was 1,234 [[cell 3]] and then 42 [[cells 4, 5]].", ["1,234", "42"]),
    ],
)
def test_figures_are_found_as_shown(answer, expected):
    assert shown(answer) == expected


@pytest.mark.parametrize(
    "answer",
    [
        "1. First point\n2. Second point\n10) Tenth",  # list numbering
        "## 2. Overview",  # a numbered heading
        "As [[cell 12]] shows.",  # the marker itself
        "On 2024-03-15 at 14:30, and on 03/15/2024.",  # dates and times
        "In March 2024, on Jan 5, 2023 and the 3rd of May.",  # dates in words, ordinals
        "Sales in 2023 were better than in 1999.",  # years
        "Between Q3 2023 and FY2024.",  # quarters and fiscal years
        "See step 12, cell 14, table 11 and the top 10 products; #15 ranks last.",  # numbers as names
        "The 3 regions and 5 products.",  # counts of the prose
        "Run `df.head(20)` or:\n```python\nx = 12345\n```",  # code
        "See [the docs](https://example.com/page/123) at https://example.com/v/456.",  # links
        "Columns col_12, p95 and H2O.",  # parts of names
        "Its id is " + "7" * 5000 + ".",  # a run of digits, not a figure (nor a crash)
        "Python 3.11 and version 2.4.",  # versions
        "Significant (p < 0.001), all >= 0.25.",  # bounds
    ],
)
def test_what_is_not_a_figure(answer):
    assert shown(answer) == []


def test_a_figure_in_a_table_and_after_a_list_number():
    assert shown("| North | 2023 | 1,234 |\n\n1. Revenue was 45.6%") == ["1,234", "45.6%"]


@pytest.mark.parametrize(
    ("figure", "output"),
    [
        ("12.3%", "0.1234"),  # a fraction shown as a percentage
        ("12.3%", "growth: 12.34"),  # a percentage rounded
        ("1,234", "1234.4"),  # a thousands separator, rounded
        ("1.2 million", "1213000"),  # a scale word
        ("1.2M", "1,213,000"),
        ("$3.5k", "3512.2"),
        ("-4.5%", "-0.045"),
        ("fell 4.5%", "-0.045"),  # signs are not compared
        ("1,200", "1213"),  # an integer rounded to its trailing zeros
        ("0.87", "r = 8.7e-01"),  # scientific notation
        ("45", "[12,45,78]"),  # a printed list, not the number 124578
    ],
)
def test_figures_match_outputs_as_a_reader_would(figure, output):
    [cited] = citations(f"It was {figure}.", [(7, output)])
    assert cited == {
        "text": figure.split()[-1] if figure.startswith("fell") else figure,
        "seq": 7,
        "verified": True,
    }


@pytest.mark.parametrize(
    ("figure", "output"),
    [
        ("12.3%", "0.1244"),
        ("1,234", "1234.6"),
        ("1.2 million", "1260000"),
        ("0.87", "0.8751"),
        ("100", "140"),  # "100" keeps two significant digits: not any number from 50 to 150
        ("1,234", "12345"),
    ],
)
def test_near_numbers_do_not_match(figure, output):
    assert citations(f"It was {figure}.", [(7, output)]) == [{"text": figure, "verified": False}]


def test_an_invented_figure_is_never_verified():
    outputs = [(3, "total: 1234"), (5, "share 0.25")]
    assert citations("Revenue was 1,234 and churn 17.5%.", outputs) == [
        {"text": "1,234", "seq": 3, "verified": True},
        {"text": "17.5%", "verified": False},
    ]


def test_the_cited_cell_is_preferred_then_the_newest_output():
    outputs = [(3, "n = 1234"), (8, "n = 1234"), (12, "n = 1234")]
    answer = "It was 1,234 [[cell 2]].\nAgain 1,234.\nUp 12% to 1,234 [[cell 9]]."
    cited = citations(answer, [*outputs, (4, "0.12")], {2: {8}, 9: {3, 4}})
    assert [c.get("seq") for c in cited] == [8, 12, 4, 3], "a marker cites the figures before it on its line"


def test_a_wrong_citation_still_traces_to_an_output_holding_the_figure():
    cited = citations("It was 1,234 [[cell 2]].", [(3, "1234"), (8, "other")], {2: {8}})
    assert cited == [{"text": "1,234", "seq": 3, "verified": True}]


def test_output_text_of_each_kind():
    assert output_text("stdout", {"text": "a 1"}) == "a 1"
    assert "ZeroDivisionError" in output_text(
        "error", {"name": "ZeroDivisionError", "value": "x", "traceback": ["t"]}
    )
    table = {"data": [{"index": 0, "revenue": 1234.5}]}
    result = {
        "data": {
            "text/plain": "  revenue",
            "text/html": "<td>98&#44;765</td>",
            "application/vnd.dataresource+json": table,
        }
    }
    text = output_text("result", result)
    assert "1234.5" in text and "98,765" in text and "revenue" in text
    assert output_text("result", {"data": "not a bundle"}) == ""
    assert output_text("notice", {"text": "123"}) == ""


def test_markers_are_stripped_and_unverified_figures_marked():
    answer = "Revenue was 1,234 [[cell 3]] and churn 17.5% [[cell 4]].\n\n1. Done"
    cited = [{"text": "1,234", "seq": 3, "verified": True}, {"text": "17.5%", "verified": False}]
    assert marked(answer, cited) == (
        "Revenue was 1,234 and churn 17.5%†.\n\n1. Done\n\n† Not found in any output of the session."
    )
    assert marked(answer, None) == strip_markers(answer) == "Revenue was 1,234 and churn 17.5%.\n\n1. Done"


def test_an_agent_over_mcp_reads_the_answer_marked_as_the_exports_show_it():
    from analyst.mcp.content import outcome

    text = "Revenue was 1,234 [[cell 1]] and churn 17.5%."
    cited = [{"text": "1,234", "seq": 3, "verified": True}, {"text": "17.5%", "verified": False}]
    events = [{"type": "assistant_message", "payload": {"text": text, "citations": cited}}]
    assert outcome("s", events).messages == [marked(text, cited)]
    assert "17.5%†" in marked(text, cited) and "[[" not in marked(text, cited)
