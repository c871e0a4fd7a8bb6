"""What of a session's data the model may see: its privacy mode and sensitive columns made into a
Policy, which turns text (a tool result, a note, the system prompt) into what the model reads.

- ``full`` (the default): the model reads outputs whole, but for the values of columns marked
  sensitive (DataFile.column_marks), replaced by ``«col:NAME»``.
- ``schema``: the values of every text column of the session's files are replaced too, tables
  a cell displays reach the model as shape, dtypes and numeric summaries (table_summaries),
  whatever their source, and file descriptions carry no row (a connection's never do). The rows
  of tables no describer read, a connection's, are caught by what the kernel holds after each
  cell (kernel_values).

A workspace in schema mode (Workspace.privacy) puts every session in it in schema mode, whatever
the session's own setting: ``effective`` is the one answer to "what mode is this session in",
and everything that filters asks it.

Values are found by the set the describer kept per table (at most analyst.files.reports
MAX_VALUES, from the rows it read), so a value the model's code transformed (upper-cased aside)
or one past those rows is not caught: this keeps rows from the model, it does not prove that
nothing of them gets out.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from analyst.audit import records as audit_records
from analyst.files import reports as file_reports
from analyst.models import AnalysisSession, DataFile, Workspace
from analyst.models.sessions import Privacy
from analyst.trust import session_workspace
from analyst.trust.table_summaries import table_summary
from analyst.trust.tables import table_key
from analyst.trust.value_matcher import ValueMatcher
from analyst.workspaces import members
from analyst.workspaces.roles import Action
from sandboxes import Execution, Result

SENSITIVE = "sensitive"
WORKSPACE_MODES = ("", Privacy.SCHEMA)  # a workspace's: each session chooses, or schema for all
MAX_VALUES = 50_000  # over all of a session's files
NO_IMAGE = "[a chart was displayed to the user; its image is not sent to you in this session]"
SCHEMA_NOTE = (
    "Privacy: this session is in schema mode. You see column names, types, row counts and the"
    " results of aggregations, never row values: in everything you read, a value of the data's"
    " text columns is replaced by «col:NAME» (NAME: its column), and a DataFrame or Series a cell"
    " displays reaches you as its shape, column types and numeric summaries. To read an"
    " aggregate, print it (e.g. print(totals.to_string())). The user sees every output whole."
    " Answer with aggregates; do not try to bring row values into your view."
)
SENSITIVE_NOTE = (
    "Privacy: the values of the columns the user marked sensitive ({columns}) are replaced by"
    " «col:NAME» in everything you read; the user sees them. Do not try to bring them into your view."
)
IMAGES_NOTE = "Chart images are not sent to you in this session; describe charts from the data."


@dataclass(frozen=True)
class Policy:
    schema: bool = False
    send_images: bool = True
    matcher: ValueMatcher = field(default_factory=lambda: ValueMatcher({}))
    sensitive: tuple[str, ...] = ()  # the columns marked sensitive, by name

    def redact(self, text: str) -> tuple[str, Counter[str]]:
        """``text`` as the model may read it, and how many values were withheld, by column."""
        return self.matcher.redact(text)

    def prompt_note(self) -> str:
        """What the system prompt says about what is withheld ("" when nothing is)."""
        notes = []
        if self.schema:
            notes.append(SCHEMA_NOTE)
        elif self.sensitive:
            notes.append(SENSITIVE_NOTE.format(columns=", ".join(self.sensitive[:20])))
        if not self.send_images:
            notes.append(IMAGES_NOTE)
        return " ".join(notes)


class SetByWorkspace(ValueError):
    """The session's workspace keeps every session in it in schema mode."""


def checked_settings(body: dict[str, Any], session: AnalysisSession | None = None) -> dict[str, Any]:
    """The privacy settings a PATCH of ``session`` gives ("privacy", "send_chart_images"),
    checked; ValueError names the bad one, SetByWorkspace refuses "full" where the workspace
    says schema."""
    given = {key: body[key] for key in ("privacy", "send_chart_images") if key in body}
    if "privacy" in given and given["privacy"] not in Privacy.values:
        raise ValueError('\'privacy\' must be "full" or "schema"')
    if "send_chart_images" in given and not isinstance(given["send_chart_images"], bool):
        raise ValueError("'send_chart_images' must be true or false")
    setter = (
        set_by_workspace(session) if session is not None and given.get("privacy") == Privacy.FULL else None
    )
    if setter is not None:
        raise SetByWorkspace(
            f"the workspace {setter.name} keeps every session in it in schema mode, so this one cannot"
            " send full outputs to the model: ask an admin of the workspace to change its privacy"
        )
    return given


def do_set(session: AnalysisSession, settings: dict[str, Any]) -> None:
    """Set the session's privacy settings (checked_settings'); a running turn follows them from
    its next request to the model."""
    if settings:
        for key, value in settings.items():
            setattr(session, key, value)
        session.save(update_fields=[*settings, "updated_at"])


def as_dict(session: AnalysisSession) -> dict[str, Any]:
    """The settings as the API and the page show them: ``privacy`` the mode in effect, and the
    workspace's name in ``privacy_set_by`` when it is the workspace's (null when the session's own)."""
    setter = set_by_workspace(session)
    return {
        "privacy": effective(session),
        "privacy_set_by": setter.name if setter is not None else None,
        "send_chart_images": session.send_chart_images,
    }


def set_by_workspace(session: AnalysisSession) -> Workspace | None:
    """The session's workspace when its privacy puts the session in schema mode, else None."""
    workspace = session_workspace.current(session)
    return workspace if workspace.privacy == Privacy.SCHEMA else None


def effective(session: AnalysisSession) -> str:
    """The session's privacy mode in effect (a Privacy value): schema when its workspace says so,
    else its own setting as saved now."""
    if set_by_workspace(session) is not None:
        return Privacy.SCHEMA
    session.refresh_from_db(fields=["privacy"])
    return session.privacy


def check_workspace_mode(mode: object) -> str:
    if mode not in WORKSPACE_MODES:
        raise members.Invalid(
            '\'privacy\' must be "schema" (every session in the workspace in schema mode) or "" (each'
            " session chooses)"
        )
    return str(mode)


def do_set_for_workspace(*, workspace: Workspace, by: AbstractBaseUser, mode: object) -> Workspace:
    """Set the workspace's privacy (check_workspace_mode), when ``by`` may manage its settings
    (members.NotAMember, members.NotAllowed otherwise); its sessions follow from their next
    request to the model. Recorded in the audit log."""
    members.check_may(by, workspace, Action.MANAGE_SETTINGS)
    was, workspace.privacy = workspace.privacy, check_workspace_mode(mode)
    workspace.save(update_fields=["privacy"])
    audit_records.record(
        "workspace_privacy",
        user=by,
        workspace=workspace,
        target=f"workspace:{workspace.id}",
        detail={"privacy": workspace.privacy, "was": was},
    )
    return workspace


def withheld_line(found: Counter[str]) -> str:
    """The line a tool result (or note) gets when values were withheld from it."""
    count = sum(found.values())
    columns = ", ".join(sorted(found)[:10])
    values = "value" if count == 1 else "values"
    return f"[privacy: {count} {values} of {columns} withheld as «col:NAME»; the user sees them]"


def policy_for(session: AnalysisSession, also: Mapping[str, str] | None = None) -> Policy:
    """The session's policy as of now (its mode and image setting read again, so a change made
    during a turn holds from its next request): the values its mode and marks withhold, and in
    schema mode ``also`` (value -> column: analyst.trust.kernel_values, a cell's tables)."""
    session.refresh_from_db(fields=["send_chart_images"])
    schema = effective(session) == Privacy.SCHEMA
    values: dict[str, str] = {}
    if schema and also:
        values.update(itertools.islice(also.items(), MAX_VALUES))
    for data_file in session.files.filter(placement=DataFile.Placement.READY):
        for key, table in _tables(data_file):
            marks = data_file.column_marks.get(key) or {}
            for column, column_values in (table.get("values") or {}).items():
                if schema or marks.get(column) == SENSITIVE:
                    for value in column_values[: MAX_VALUES - len(values)]:
                        values.setdefault(value, column)
    return Policy(
        schema=schema,
        send_images=session.send_chart_images,
        matcher=ValueMatcher(values),
        sensitive=tuple(sensitive_columns(session)),
    )


def _tables(data_file: DataFile) -> list[tuple[str, dict[str, Any]]]:
    tables = (data_file.description or {}).get("tables") or []
    return [(table_key(data_file.path, t), t) for t in tables if isinstance(t, dict)]


def file_summary(session: AnalysisSession, data_file: DataFile) -> str:
    """A file as the model reads of it: with no preview and no sample values in schema mode, or
    when a column of it is sensitive (a sample is cut short: its value would not be found whole)."""
    marked = any(SENSITIVE in columns.values() for columns in data_file.column_marks.values())
    if (effective(session) != Privacy.SCHEMA and not marked) or not data_file.summary:
        return data_file.summary
    return file_reports.summary(data_file.path, data_file.description or {}, rows_shown=False)


def told(session: AnalysisSession) -> str:
    """What the system prompt says of what the model does not see ("" when nothing is withheld)."""
    note = Policy(
        schema=effective(session) == Privacy.SCHEMA,
        send_images=session.send_chart_images,
        sensitive=tuple(sensitive_columns(session)),
    ).prompt_note()
    return f"\n\n{note}" if note else ""


def sensitive_columns(session: AnalysisSession) -> list[str]:
    """The names of the columns marked sensitive in the session's files."""
    names: list[str] = []
    for marks in session.files.values_list("column_marks", flat=True):
        for columns in (marks or {}).values():
            names += [c for c, mark in (columns or {}).items() if mark == SENSITIVE and c not in names]
    return names


def reduced(execution: Execution, policy: Policy) -> Execution:
    """In schema mode, the execution with each displayed table's text replaced by its summary
    (shape, dtypes, numeric summaries); otherwise the execution itself."""
    if not policy.schema:
        return execution
    results = [_reduced(result) for result in execution.results]
    return Execution(
        results=results,
        stdout_parts=execution.stdout_parts,
        stderr_parts=execution.stderr_parts,
        error=execution.error,
        execution_count=execution.execution_count,
    )


def _reduced(result: Result) -> Result:
    summary = table_summary(result.data)
    if summary is None and result.html and "<table" in result.html:
        summary = "[a table; its rows are withheld from you]"  # a table without its data resource
    if summary is None:
        return result
    return Result(bundle=result.bundle, is_main_result=result.is_main_result, text=summary, png=result.png)
