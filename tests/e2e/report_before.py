"""The HTML report as it was before issue 25 (item 4): every question, remark, cell and output of
the transcript, one after another. Kept, frozen, as the baseline the new report's height is
measured against (test_report_height.py); its template is report_before.html beside it.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import nh3
from django.template import Context, Template
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from analyst.sessions.exports.transcript import Block, Code, Failure, Output, Prose, Rich, Stream

MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")
TEXT_TAGS = {"p", "br", "b", "i", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "hr"}
TEXT_TAGS |= {"h1", "h2", "h3", "h4", "h5", "h6", "sub", "sup", "span", "div", "a"}
TABLE_TAGS = {"table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col"}
CELL_ATTRIBUTES = {"colspan", "rowspan"}
IMAGES = ("image/png", "image/jpeg", "image/svg+xml")
FIGURES = ("application/vnd.plotly.v1+json",)
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def report(title: str, blocks: list[Block], preface: str) -> str:
    context = {"title": title, "preface": preface, "blocks": [_block(block) for block in blocks]}
    template = Template((Path(__file__).parent / "report_before.html").read_text())
    return template.render(Context(context))


def _block(block: Block) -> dict[str, Any]:
    if isinstance(block, Prose):
        return {"kind": block.role, "html": _markdown(block.text)}
    return _code(block)


def _code(block: Code) -> dict[str, Any]:
    outputs = [_output(output) for output in block.outputs]
    return {"kind": "code", "by": block.by, "source": block.source, "outputs": outputs}


def _output(output: Output) -> dict[str, Any]:
    if isinstance(output, Stream):
        return {"kind": "stream", "name": output.name, "text": ANSI.sub("", output.text)}
    if isinstance(output, Failure):
        traceback = ANSI.sub("", output.traceback)
        return {"kind": "failure", "name": output.name, "value": output.value, "traceback": traceback}
    return _display(output)


def _display(output: Rich) -> dict[str, Any]:
    """The richest part of a display that the report can hold without running anything."""
    data = output.data
    for mime in IMAGES:
        value = data.get(mime)
        if isinstance(value, str):  # PNG and JPEG come base64 already; an SVG is text
            encoded = base64.b64encode(value.encode()).decode() if mime == "image/svg+xml" else value
            return {"kind": "image", "src": f"data:{mime};base64,{encoded}"}
    if any(mime in data for mime in FIGURES):
        return {"kind": "figure"}
    if isinstance(data.get("text/html"), str):
        return {"kind": "html", "html": _clean_html(data["text/html"])}
    return {"kind": "text", "text": ANSI.sub("", str(data.get("text/plain", "")))}


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
