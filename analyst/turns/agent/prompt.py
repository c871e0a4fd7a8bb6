"""The system prompt: who the model is, which files the session holds (with their data dictionaries),
the connections it uses, and the standing instructions of its workspace and of the user asking."""

from __future__ import annotations

from analyst.connections import describe as connections_told
from analyst.models import AnalysisSession, DataFile, Event
from analyst.trust import dictionary, instructions, privacy

INSTRUCTIONS = (
    "You are a careful data analyst. Answer the user's questions about their data by running"
    " Python with the run_python tool, then explain what you found in clear, short prose."
    " Look at the data before drawing conclusions; state assumptions; prefer a chart when it helps."
    " Never invent numbers: every figure you quote must come from code you ran."
    # The citation convention (why this one: analyst.trust.citations). The app traces every figure
    # itself; a marker only tells it where to look first, and links the figure for the reader.
    " Each cell's output starts with its label, such as [cell 3]; after a figure you quote, cite"
    " the cell whose output shows it as [[cell 3]] (for example: revenue rose 12.3% [[cell 3]])."
)


MAX_REMOVED_NAMED = 20


def system_prompt(session: AnalysisSession, asker_id: object = None) -> str:
    """The prompt for a turn asked by ``asker_id`` (by default the session's owner), whose own
    instructions it gives."""
    files = list(session.files.all())
    text = INSTRUCTIONS
    if files:
        described = (_described(session, f) + dictionary.told(f) for f in files)
        text += "\n\nFiles in the kernel's working folder:\n\n" + "\n\n".join(described)
    else:
        text += "\n\nNo files have been uploaded yet."
    removed = removed_paths(session, {f.path for f in files})
    if removed:
        text += "\n\nDeleted by the user, no longer in the working folder: " + ", ".join(removed) + "."
    text += connections_told.told(session)
    return text + instructions.told(session, asker_id) + privacy.told(session)


def _described(session: AnalysisSession, data_file: DataFile) -> str:
    if data_file.placement == DataFile.Placement.FAILED:
        return f"{data_file.path}: could not be put in the working folder ({data_file.placement_error})."
    read = privacy.file_summary(session, data_file)
    return read or f"{data_file.path}: still being read into the working folder."


def removed_paths(session: AnalysisSession, present: set[str]) -> list[str]:
    """The uploads deleted from the session (newest first), but for paths uploaded again since."""
    removed = Event.objects.filter(session=session, type="file_removed").order_by("-seq")
    paths = dict.fromkeys(str(p) for p in removed.values_list("payload__path", flat=True) if p)
    return [p for p in paths if p not in present][:MAX_REMOVED_NAMED]
