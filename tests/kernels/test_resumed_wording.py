"""Every reason sandboxd gives for a pause (``_try_pause(..., why=...)`` in its pauser, and the
restored kernel) has its own words on the page, not the generic "had been paused"."""

import re
from pathlib import Path

from analyst.kernels.session_kernel import RESUMED_WHY

PAUSER = Path(__file__).resolve().parents[2] / "sandboxes" / "server" / "pausing" / "pauser.py"


def test_every_reason_sandboxd_pauses_for_has_its_words():
    reasons = set(re.findall(r'why="(\w+)"', PAUSER.read_text()))
    assert {"idle", "memory", "room", "cpu", "restored"} <= reasons, reasons
    assert reasons <= set(RESUMED_WHY), reasons - set(RESUMED_WHY)
