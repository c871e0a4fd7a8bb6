"""A transcript as a Python script in the percent format (``# %%`` cells, which VS Code, Spyder
and Jupytext read as cells): the conversation as comments, the code as it ran.

It runs top to bottom with `python` beside its data: a fixed UTF-8 coding line comes first (a
title on line one could declare another encoding, and UTF-7 turns comments into code), then the
imports the sandbox made for every cell. A cell that failed when it ran stays, commented out,
under the error it raised, as the cells after it did. IPython's own lines (``%pip install``,
``!ls``) are commented out too, as Jupytext does: Python cannot run them.
"""

from __future__ import annotations

from analyst.sessions.exports import runtime
from analyst.sessions.exports.transcript import Block, Code, Failure, Prose

CODING = "# -*- coding: utf-8 -*-"
LABELS = {"user": "Question", "assistant": "Answer", "note": "Note"}
IMPLICIT = "# %% What the sandbox imported for every cell"


def script(title: str, blocks: list[Block], preface: str) -> str:
    heading = _comment(f"{title}\n\n{preface}")
    parts = [f"{CODING}\n{heading}", "\n".join([IMPLICIT, *runtime.implicit_imports()])]
    for block in blocks:
        if isinstance(block, Prose):
            parts.append("# %% [markdown]\n" + _comment(f"{LABELS[block.role]}: {block.text}"))
        else:
            parts.append(_code(block))
    return "\n\n".join(parts) + "\n"


def _code(block: Code) -> str:
    header = "# %%" if block.by == "user" else "# %% written by the model"
    failure = next((output for output in block.outputs if isinstance(output, Failure)), None)
    if failure is None:
        return f"{header}\n{_without_magics(block.source.rstrip())}"
    said = _comment(f"This cell failed when it ran ({failure.name}: {failure.value}), so it is left out:")
    return f"{header}\n{said}\n{_comment(block.source.rstrip())}"


def _comment(text: str) -> str:
    """``text`` as comment lines, each a line to Python too (a NUL byte, which no source may
    hold, written as its escape)."""
    return "\n".join(f"# {line}".rstrip() for line in text.replace("\0", "\\0").splitlines())


def _without_magics(source: str) -> str:
    lines = source.splitlines()
    return "\n".join(f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in lines)
