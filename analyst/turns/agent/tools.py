"""The one tool, run_python: its definition, and an execution turned into what the model reads."""

from __future__ import annotations

import dataclasses

from analyst.connections import describe as connections_told
from analyst.files.artifacts import decoded_image, not_an_image_notice
from analyst.models import AnalysisSession
from analyst.trust.charts import describe_results
from analyst.turns.agent.providers import ImagePart, TextPart, ToolResultPart, ToolSpec
from sandboxes import Execution, Result

RUN_PYTHON = ToolSpec(
    name="run_python",
    description=(
        "Run Python code in the session's persistent Jupyter kernel and return its output. State"
        " (variables, imports, loaded DataFrames) persists across calls, so build on earlier cells"
        " instead of repeating them. pandas (pd), numpy (np) and matplotlib.pyplot (plt) are already"
        " imported. Charts shown with plt.show() are captured and displayed to the user, so do not"
        " save them unless asked. The value of the last expression is displayed, like a notebook."
        " Uploaded files are under data/. Errors come back as tracebacks: read them and fix the code."
    ),
    parameters={
        "type": "object",
        "properties": {"code": {"type": "string", "description": "The Python code to run."}},
        "required": ["code"],
    },
)
TRACEBACK_LIMIT = 20_000


def run_python_for(session: AnalysisSession) -> ToolSpec:
    """run_python as this session's model sees it: naming its connections when it has some."""
    note = connections_told.tool_note(session)
    return dataclasses.replace(RUN_PYTHON, description=RUN_PYTHON.description + note) if note else RUN_PYTHON


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    hidden = len(text) - limit
    return text[:limit] + f"\n[... {hidden} more characters not shown to you; the user sees the whole output]"


def execution_text(execution: Execution, limit: int) -> str:
    """What the cell printed and displayed, as text, truncated for the model with a marker."""
    pieces = [execution.stdout, execution.stderr]
    pieces += [r.text for r in execution.results if r.text and not is_chart(r)]
    text = truncate("\n".join(p for p in pieces if p).strip(), limit)
    charts = describe_results(execution.results)  # in words, whether or not the model sees images
    if charts:
        text += ("\n\n" if text else "") + charts
    if execution.error is not None:
        traceback = execution.error.traceback or str(execution.error)
        text += ("\n\n" if text else "") + "Error:\n" + truncate(traceback, TRACEBACK_LIMIT)
    return text or "(the cell ran and printed nothing)"


def tool_result(
    tool_call_id: str, execution: Execution, *, limit: int, images: bool, label: str = ""
) -> ToolResultPart:
    """What the model reads of a cell: ``label`` (its cell's, "[cell 3]", which it cites) on its
    own line before the output's text, then its charts."""
    text = execution_text(execution, limit)
    content: list[TextPart | ImagePart] = [TextPart(f"{label}\n{text}" if label else text)]
    for result in execution.results:
        if not result.png:
            continue
        if not is_chart(result):  # a provider refuses a whole request over one bad image
            content.append(TextPart(not_an_image_notice("image/png")))
        elif images:
            content.append(ImagePart("image/png", result.png))
        else:
            content.append(TextPart("[a chart was displayed to the user; you cannot see images]"))
    return ToolResultPart(tool_call_id, content, is_error=execution.error is not None)


def is_chart(result: Result) -> bool:
    """Whether the result carries a real PNG (the kernel's code may send any text as one)."""
    return result.png is not None and decoded_image("image/png", result.png) is not None
