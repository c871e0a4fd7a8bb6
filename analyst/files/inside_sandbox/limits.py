"""The describer's bounds: the limits a request may lower or raise, the fixed ones, and the time
budget of one description."""

import time

LIMITS = {
    "max_unpacked_bytes": 512 << 20,  # a zip's members, all together, once unpacked
    "max_ratio": 200,  # unpacked / packed size of any member: a zip bomb's is about 1000
    "max_members": 50,
    "max_sheets": 20,
    "sample_bytes": 1 << 20,  # the head read to detect encoding, delimiter, header and numbers
    "sample_rows": 10_000,  # dtypes and nulls come from at most this many rows
    "preview_rows": 10,
    "sample_values": 5,
    "text_values": 2_000,  # distinct values of a table's text columns, kept from the model
    "time_budget": 10.0,  # seconds for the whole description
}
MAX_REPORT = 190_000  # bytes of JSON; the report must stay under 200 KB whatever the file
MAX_COLUMNS = 200
PREVIEW_COLUMNS = 50
CELL_CHARS = 100
SAMPLE_CHARS = 60
VALUE_CHARS = 100
NAME_CHARS = 200
MAX_SHEET_NAMES = 500
COUNT_CHUNK = 16 << 20
EXCEL_SAMPLE_CELLS = 100_000
CSV_SAMPLE_BYTES_FACTOR = 8  # a CSV sample parses at most this many sample_bytes
JSON_WHOLE_BYTES = 64 << 20  # a larger .json is described from records parsed off its head


def limits_from(requested) -> dict:
    """LIMITS, with those of ``requested`` (the request's "limits") that name one and are
    positive numbers in its place."""
    limits = dict(LIMITS)
    for key, value in (requested or {}).items():
        if key in LIMITS and isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            limits[key] = type(LIMITS[key])(value)
    return limits


class Budget:
    """The time left for the whole description."""

    def __init__(self, seconds: float) -> None:
        self._clock = time.monotonic
        self.deadline = self._clock() + max(0.0, seconds)

    def left(self) -> float:
        return self.deadline - self._clock()

    def over(self) -> bool:
        return self.left() <= 0
