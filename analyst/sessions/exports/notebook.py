"""A transcript as a Jupyter notebook (nbformat 4): the conversation as markdown cells, the code
as code cells with their outputs, charts and plotly figures included.

Run top to bottom (``jupyter nbconvert --execute``) with the session's data files beside it: its
first code cell makes the imports the sandbox made for every cell, and a cell that failed when it
ran is tagged ``raises-exception``, so its error does not stop the run, as it did not stop the
analysis.
"""

from __future__ import annotations

import nbformat
from nbformat import v4

from analyst.sessions.exports import runtime
from analyst.sessions.exports.transcript import Block, Code, Failure, Prose, Rich, Stream

HEADINGS = {"user": "**Question**", "assistant": "**Answer**", "note": "*Note*"}


def notebook(title: str, blocks: list[Block], preface: str) -> str:
    """The notebook as JSON text, validated against nbformat's schema."""
    cells = [v4.new_markdown_cell(f"# {title}\n\n{preface}"), _implicit_imports()]
    count = 0
    for block in blocks:
        if isinstance(block, Prose):
            cells.append(v4.new_markdown_cell(f"{HEADINGS[block.role]}\n\n{block.text}"))
            continue
        count += 1
        cells.append(_code_cell(block, count))
    book = v4.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(book)
    return nbformat.writes(book)


def _implicit_imports() -> nbformat.NotebookNode:
    source = "\n".join(runtime.implicit_imports())
    return v4.new_code_cell(source, metadata={"analyst": {"by": "sandbox"}})


def _code_cell(block: Code, count: int) -> nbformat.NotebookNode:
    metadata = {"analyst": {"by": block.by}}
    if block.failed:
        metadata["tags"] = ["raises-exception"]
    outputs = []
    for output in block.outputs:
        if isinstance(output, Stream):
            outputs.append(v4.new_output("stream", name=output.name, text=output.text))
        elif isinstance(output, Rich) and output.main:
            outputs.append(v4.new_output("execute_result", data=output.data, execution_count=count))
        elif isinstance(output, Rich):
            outputs.append(v4.new_output("display_data", data=output.data))
        elif isinstance(output, Failure):
            lines = output.traceback.splitlines() or [f"{output.name}: {output.value}"]
            outputs.append(v4.new_output("error", ename=output.name, evalue=output.value, traceback=lines))
    return v4.new_code_cell(block.source, execution_count=count, outputs=outputs, metadata=metadata)
