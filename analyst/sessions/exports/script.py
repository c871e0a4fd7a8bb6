"""A transcript as a Python script in the percent format (``# %%`` cells, which VS Code, Spyder
and Jupytext read as cells): the conversation as comments, the code as it ran.

A cell that failed when it ran stays, commented out, under the error it raised: the script runs
top to bottom, as the cells after it did. IPython's own lines (``%pip install``, ``!ls``) are
commented out too, as Jupytext does: Python cannot run them.
"""

from __future__ import annotations

from analyst.sessions.exports.transcript import Block, Code, Failure, Prose

LABELS = {"user": "Question", "assistant": "Answer", "note": "Note"}


def script(title: str, blocks: list[Block], preface: str) -> str:
    parts = [_comment(f"{title}\n\n{preface}")]
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
    return "\n".join(f"# {line}".rstrip() for line in text.splitlines())


def _without_magics(source: str) -> str:
    lines = source.splitlines()
    return "\n".join(f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in lines)
