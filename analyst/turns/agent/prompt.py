"""The system prompt: who the model is, and which files the session holds."""

from __future__ import annotations

from analyst.models import AnalysisSession, DataFile, Event

INSTRUCTIONS = (
    "You are a careful data analyst. Answer the user's questions about their data by running"
    " Python with the run_python tool, then explain what you found in clear, short prose."
    " Look at the data before drawing conclusions; state assumptions; prefer a chart when it helps."
    " Never invent numbers: every figure you quote must come from code you ran."
)


MAX_REMOVED_NAMED = 20


def system_prompt(session: AnalysisSession) -> str:
    files = list(session.files.all())
    text = INSTRUCTIONS
    if files:
        text += "\n\nFiles in the kernel's working folder:\n\n" + "\n\n".join(_described(f) for f in files)
    else:
        text += "\n\nNo files have been uploaded yet."
    removed = removed_paths(session, {f.path for f in files})
    if removed:
        text += "\n\nDeleted by the user, no longer in the working folder: " + ", ".join(removed) + "."
    return text


def _described(data_file: DataFile) -> str:
    if data_file.placement == DataFile.Placement.FAILED:
        return f"{data_file.path}: could not be put in the working folder ({data_file.placement_error})."
    return data_file.summary or f"{data_file.path}: still being read into the working folder."


def removed_paths(session: AnalysisSession, present: set[str]) -> list[str]:
    """The uploads deleted from the session (newest first), but for paths uploaded again since."""
    removed = Event.objects.filter(session=session, type="file_removed").order_by("-seq")
    paths = dict.fromkeys(str(p) for p in removed.values_list("payload__path", flat=True) if p)
    return [p for p in paths if p not in present][:MAX_REMOVED_NAMED]
