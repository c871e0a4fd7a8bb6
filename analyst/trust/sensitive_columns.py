"""Columns that look like personal data: e-mail addresses, phone numbers, IBANs and national ids
(US social security numbers, UK national insurance numbers), told from a column's distinct values
(the describer's, analyst.files.reports). Proposed to the user as sensitive, never marked alone."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from analyst.trust.tables import table_key

SHARE = 0.8  # of a column's (non-empty) values that must look the part
MIN_VALUES = 3

EMAIL = re.compile(r"[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
PHONE = re.compile(r"\+?[\d\s().-]{7,20}")
IBAN = re.compile(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}")
SSN = re.compile(r"(\d{3})-(\d{2})-(\d{4})")
UK_NINO = re.compile(r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]")


def is_email(value: str) -> bool:
    return EMAIL.fullmatch(value) is not None


def is_phone(value: str) -> bool:
    """7 to 15 digits (E.164's most), written with the usual separators; not a date or a plain
    number with a decimal point."""
    digits = sum(c.isdigit() for c in value)
    return (
        PHONE.fullmatch(value) is not None
        and 7 <= digits <= 15
        and not re.fullmatch(r"\d{1,4}[-./]\d{1,2}[-./]\d{1,4}", value)
        and not re.fullmatch(r"-?\d+\.\d+", value)
    )


def is_iban(value: str) -> bool:
    """An IBAN whose ISO 7064 mod-97 check digits are right (spaces allowed)."""
    compact = value.replace(" ", "").upper()
    if IBAN.fullmatch(compact) is None:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def is_national_id(value: str) -> bool:
    """A US social security number as the SSA issues them (area not 000, 666 or 9xx; group and
    serial not zero), or a UK national insurance number."""
    compact = value.replace(" ", "").upper()
    ssn = SSN.fullmatch(value.strip())
    if ssn:
        area, group, serial = ssn.groups()
        return area not in ("000", "666") and not area.startswith("9") and group != "00" and serial != "0000"
    return UK_NINO.fullmatch(compact) is not None


KINDS: dict[str, Callable[[str], bool]] = {
    "email": is_email,
    "iban": is_iban,
    "national_id": is_national_id,
    "phone": is_phone,  # last: the loosest
}


def kind_of(values: list[str]) -> str | None:
    """What a column's values look like ("email", "iban", "national_id", "phone"), or None: a
    kind SHARE of them (at least MIN_VALUES) fit."""
    present = [v.strip() for v in values if v and v.strip()]
    if len(present) < MIN_VALUES:
        return None
    for kind, fits in KINDS.items():
        if sum(1 for v in present if fits(v)) >= SHARE * len(present):
            return kind
    return None


def proposed_marks(
    description: dict[str, Any], path: str, *, decided: dict[str, dict[str, str]]
) -> dict[str, dict[str, str]]:
    """{table: {column: kind}} for the columns of a file's description that look like personal
    data, but for those the user already ``decided`` on (DataFile.column_marks, whose shape
    and table keys these share: analyst.trust.tables)."""
    proposed: dict[str, dict[str, str]] = {}
    for table in description.get("tables", []):
        key = table_key(path, table)
        for column, values in (table.get("values") or {}).items():
            kind = kind_of(values)
            if kind and column not in (decided.get(key) or {}):
                proposed.setdefault(key, {})[column] = kind
    return proposed
