"""A transcript as a self-contained HTML report for someone who was not there: each question, its
final answer and the charts and tables its cells made; the code, the outputs, failed cells and
answers asked again folded away under <details> (a click opens them, no script needed).

What the model or a cell wrote is hostile: markdown is rendered without raw HTML or images,
HTML outputs (pandas tables) keep only table and text markup (nh3, an allowlist), and the page
carries a Content-Security-Policy of its own, wherever it is opened from: nothing runs or loads
but its inline styles and data: images, and, in a report holding a plotly figure, the app's own
plotly.js and figure drawing inline, by their hashes (report_scripts.py). The figures are JSON
data blocks, never run.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import nh3
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from analyst.sessions.exports import report_outlines, report_scripts
from analyst.sessions.exports.report_outline import Section, outline
from analyst.sessions.exports.transcript import Block, Failure, Output, Prose, Rich, Stream

MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")
TEXT_TAGS = {"p", "br", "b", "i", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "hr"}
TEXT_TAGS |= {"h1", "h2", "h3", "h4", "h5", "h6", "sub", "sup", "span", "div", "a"}
TABLE_TAGS = {"table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col"}
CELL_ATTRIBUTES = {"colspan", "rowspan"}
IMAGES = ("image/png", "image/jpeg", "image/svg+xml")
FIGURE = "application/vnd.plotly.v1+json"
CHARTS = frozenset({"image", "figure"})
ABOVE = {"kind": "above"}  # in the fold, where an output shown above was
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
STREAM_LINES = 1_000  # of a print, kept in the fold: the notebook has every line
UNDRAWN = "An interactive chart, which this server cannot draw here: the notebook has it."
JSON_IN_SCRIPT = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def report(title: str, blocks: list[Block], preface: str, *, masthead: SafeString | None = None) -> str:
    """The report's HTML; ``masthead``, HTML of the caller's own, goes under its preface (a
    published report's version, its list of versions and what changed)."""
    scripts = report_scripts.scripts()
    items = [_item(item, drawn=scripts is not None) for item in outline(blocks)]
    drawn = [output for item in items for output in _outputs(item) if output["kind"] == "figure"]
    figures = bool(drawn)
    maps = report_outlines.outlines(set().union(*(output["outlines"] for output in drawn)))
    context = {
        "title": title,
        "preface": preface,
        "masthead": masthead,
        "items": items,
        "scripts": scripts if figures else None,
        "outlines": mark_safe(json.dumps(maps).translate(JSON_IN_SCRIPT)) if maps else None,  # noqa: S308 (no <, > or & left)
        "policy": scripts.policy() if figures and scripts else report_scripts.POLICY,
    }
    return render_to_string("analyst/exports/report.html", context)


def _item(item: Section | Prose, *, drawn: bool) -> dict[str, Any]:
    if isinstance(item, Prose):
        return {"kind": "note", "html": _markdown(item.text)}
    return _section(item, drawn=drawn)


def _section(section: Section, *, drawn: bool) -> dict[str, Any]:
    """Out of the fold, in ``shown``: the charts its cells drew and the last table they showed
    (what the answer was read from; the tables on the way there are work). In its ``work``, each
    cell with those replaced by a pointer to them (a chart is in the file once)."""
    outputs = {id(cell): [_output(output, drawn=drawn) for output in cell.outputs] for cell in section.cells}
    succeeded = [output for cell in section.cells if not cell.failed for output in outputs[id(cell)]]
    last_table = next((output for output in reversed(succeeded) if output["kind"] == "html"), None)
    picked = [output for output in succeeded if output["kind"] in CHARTS or output is last_table]
    work: list[dict[str, Any]] = []
    for block in section.work:
        if isinstance(block, Prose):
            work.append({"kind": "remark", "html": _markdown(block.text)})
            continue
        kept = [
            ABOVE if any(output is shown for shown in picked) else output for output in outputs[id(block)]
        ]
        work.append(
            {"kind": "code", "by": block.by, "source": block.source, "failed": block.failed, "outputs": kept}
        )
    cells = section.cells
    return {
        "kind": "section",
        "question": _markdown(section.question.text) if section.question else None,
        "answer": _markdown(section.answer.text) if section.answer else None,
        "shown": picked,
        "work": work,
        "cells": len(cells),
        "failed": sum(cell.failed for cell in cells),
        "earlier": [_section(old, drawn=drawn) for old in section.earlier],
    }


def _outputs(item: dict[str, Any]) -> list[dict[str, Any]]:
    """Every output of a rendered item, its earlier answers' included."""
    found = list(item.get("shown", []))
    for done in item.get("work", []):
        found += done.get("outputs", [])
    for old in item.get("earlier", []):
        found += _outputs(old)
    return found


def _output(output: Output, *, drawn: bool) -> dict[str, Any]:
    if isinstance(output, Stream):
        return {"kind": "stream", "name": output.name, **_capped(ANSI.sub("", output.text))}
    if isinstance(output, Failure):
        traceback = ANSI.sub("", output.traceback)
        return {"kind": "failure", "name": output.name, "value": output.value, "traceback": traceback}
    return _display(output, drawn=drawn)


def _display(output: Rich, *, drawn: bool) -> dict[str, Any]:
    """The richest part of a display that the report can hold: a plotly figure when the report
    can draw it, an image, a table, or text."""
    data = output.data
    figure = _figure(data.get(FIGURE))
    if figure is not None and drawn:
        return {
            "kind": "figure",
            "json": mark_safe(json.dumps(figure).translate(JSON_IN_SCRIPT)),  # noqa: S308 (no <, > or & left)
            "outlines": report_outlines.needed(figure),
        }
    for mime in IMAGES:
        value = data.get(mime)
        if isinstance(value, str):  # PNG and JPEG come base64 already; an SVG is text
            encoded = base64.b64encode(value.encode()).decode() if mime == "image/svg+xml" else value
            return {"kind": "image", "src": f"data:{mime};base64,{encoded}"}
    if isinstance(data.get("text/html"), str):
        return {"kind": "html", "html": _clean_html(data["text/html"])}
    if figure is not None:
        return {"kind": "text", "text": UNDRAWN}
    return {"kind": "text", "text": ANSI.sub("", str(data.get("text/plain", "")))}


def _figure(value: object) -> dict[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _capped(text: str) -> dict[str, Any]:
    lines = text.splitlines(keepends=True)
    return {"text": "".join(lines[:STREAM_LINES]), "left_out": max(0, len(lines) - STREAM_LINES)}


def _markdown(text: str) -> SafeString:
    return _clean_html(MARKDOWN.render(text))


def _clean_html(html: str) -> SafeString:
    cleaned = nh3.clean(
        html,
        tags=TEXT_TAGS | TABLE_TAGS,
        attributes={"th": CELL_ATTRIBUTES, "td": CELL_ATTRIBUTES, "a": {"href"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(cleaned)  # noqa: S308 (nh3's allowlist above is what makes it safe)
