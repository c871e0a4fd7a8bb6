"""The report a kernel's state cell prints (kernel_state.py), read as what it is: kernel output.

The kernel runs the user's code, which may have patched anything the state cell uses (json,
print, sorted...), so its report is checked field by field: a report of the wrong shape, or
larger than the limits below, fails the save or load; it never reaches a caller as it came.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from sandboxes.server.snapshots import kernel_state

MAX_NAMES = 10_000  # variables saved or restored in one context
MAX_UNSAVED = kernel_state.MAX_UNSAVED  # variables named as not saved, each with why
MAX_NAME_CHARS = kernel_state.MAX_NAME_CHARS
MAX_MESSAGE_CHARS = 300
ERRORS = frozenset({"too_large", "failed", "unpicklable"})
PRINTABLE = re.compile(r"[^\x00-\x1f\x7f-\x9f]*")  # no control characters, terminal escapes among them


class Malformed(ValueError):
    pass


def parse(stdout: str) -> dict[str, Any]:
    """The last report line in ``stdout``, checked: {"error", "message"?, "limit"?} or
    {"saved", "unsaved", "size", "parts"?, "eager"?} or {"restored", "late"?}. A missing or
    malformed report comes back as {"error": "failed", "message": ...} saying so."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(kernel_state.REPORT_PREFIX):
            try:
                return check(json.loads(line[len(kernel_state.REPORT_PREFIX) :]))
            except (ValueError, RecursionError) as exc:
                return {"error": "failed", "message": f"the kernel's report was malformed ({exc})"}
    return {"error": "failed", "message": "the kernel gave no report"}


def check(report: object) -> dict[str, Any]:
    """``report`` if it has one of the report's shapes and sizes; Malformed if not."""
    if not isinstance(report, dict):
        raise Malformed("not an object")
    keys = frozenset(report)
    if "error" in report:
        if not keys <= {"error", "message", "limit"} or report["error"] not in ERRORS:
            raise Malformed("an unknown error")
        checked: dict[str, Any] = {"error": report["error"]}
        if "message" in report:
            checked["message"] = message(report["message"])
        if "limit" in report:
            checked["limit"] = count(report["limit"])
        return checked
    saved_keys = {"saved", "unsaved", "size"}
    if saved_keys <= keys <= saved_keys | {"parts", "eager"} and ("eager" not in keys or "parts" in keys):
        unsaved = report["unsaved"]
        if not isinstance(unsaved, dict) or len(unsaved) > MAX_UNSAVED:
            raise Malformed(f"unsaved must be an object of at most {MAX_UNSAVED} names")
        checked = {
            "saved": names(report["saved"]),
            "unsaved": {name(key): message(why) for key, why in unsaved.items()},
            "size": count(report["size"]),
        }
        if "parts" in report:
            checked["parts"] = parts(report["parts"], checked["size"])
        if "eager" in report:
            checked["eager"] = eager(report["eager"], len(checked["parts"]))
        return checked
    if keys in ({"restored"}, {"restored", "late"}):
        return {"restored": names(report["restored"]), "late": names(report.get("late", []))}
    raise Malformed("unexpected fields")


def parts(value: object, size: int) -> list[dict[str, Any]]:
    """A saved namespace's parts ({"names", "size"} each, in the order written), which must
    add up to its ``size``."""
    if not isinstance(value, list) or not 0 < len(value) <= MAX_NAMES:
        raise Malformed(f"parts must be a list of at most {MAX_NAMES}")
    checked = []
    for part in value:
        if not isinstance(part, dict) or frozenset(part) != {"names", "size"}:
            raise Malformed("a part has names and a size")
        checked.append({"names": names(part["names"]), "size": count(part["size"])})
    if sum(part["size"] for part in checked) != size:
        raise Malformed("the parts do not add up to the size")
    return checked


def eager(value: object, parts: int) -> list[int]:
    """Where each of the leading parts, pickled with one memo, begins in it: at most ``parts``
    places, in order."""
    if not isinstance(value, list) or not 0 < len(value) <= parts:
        raise Malformed(f"eager must be a list of 1 to {parts} places")
    places = [count(place) for place in value]
    if places != sorted(places):
        raise Malformed("the places in the memo must be in order")
    return places


def names(value: object) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_NAMES:
        raise Malformed(f"a list of at most {MAX_NAMES} names was expected")
    return [name(item) for item in value]


def name(value: object) -> str:
    """A Python identifier of at most MAX_NAME_CHARS characters."""
    if not isinstance(value, str) or not value.isidentifier() or len(value) > MAX_NAME_CHARS:
        raise Malformed(f"a variable name must be an identifier of at most {MAX_NAME_CHARS} characters")
    return value


def message(value: object) -> str:
    if not isinstance(value, str) or len(value) > MAX_MESSAGE_CHARS or not PRINTABLE.fullmatch(value):
        raise Malformed(f"a message must be printable text of at most {MAX_MESSAGE_CHARS} characters")
    return value


def count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Malformed("a size must be a whole number")
    return value


def unsaved_names(value: object) -> list[str]:
    """The names of a stored manifest's ``unsaved`` (written by an older sandboxd, perhaps
    unchecked): the valid ones, at most MAX_UNSAVED."""
    if not isinstance(value, dict):
        return []
    valid = []
    for key in value:
        with contextlib.suppress(Malformed):
            valid.append(name(key))
    return sorted(valid)[:MAX_UNSAVED]
