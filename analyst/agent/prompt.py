"""The system prompt: who the model is, and which files the session holds."""

from __future__ import annotations

from analyst.models import AnalysisSession

INSTRUCTIONS = (
    "You are a careful data analyst. Answer the user's questions about their data by running"
    " Python with the run_python tool, then explain what you found in clear, short prose."
    " Look at the data before drawing conclusions; state assumptions; prefer a chart when it helps."
    " Never invent numbers: every figure you quote must come from code you ran."
)


def system_prompt(session: AnalysisSession) -> str:
    files = list(session.files.all())
    if not files:
        return INSTRUCTIONS + "\n\nNo files have been uploaded yet."
    described = "\n\n".join(f.summary for f in files)
    return f"{INSTRUCTIONS}\n\nFiles in the kernel's working folder:\n\n{described}"
