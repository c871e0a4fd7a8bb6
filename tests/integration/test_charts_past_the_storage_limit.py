"""A chart that would take its owner past their storage limit is not stored: the result keeps a text
notice saying why (the page shows it in the chart's place), the cell and the charts that fit stand."""

from __future__ import annotations

from analyst.accounts import limits
from analyst.models import Artifact, UserLimits
from tests.integration.test_resume_and_fork import run_cell

LIMIT = 64 << 10
CHARTS = (
    "import base64, os\n"
    "def chart(size):\n"
    "    png = b'\\x89PNG\\r\\n\\x1a\\n' + os.urandom(size - 8)\n"
    "    display({'image/png': base64.b64encode(png).decode()}, raw=True)\n"
    "chart(40 << 10)\n"
    "chart(40 << 10)\n"
    "chart(20 << 10)\n"
    "print('after')"
)
REFUSED = (
    "[a image/png part of this result was not stored: A chart (40 KiB) would take your files, charts"
    " and saved kernels past your 64 KiB (they take 40 KiB); delete files or sessions to make room.]"
)


def test_a_chart_past_the_limit_becomes_a_notice_and_the_cell_goes_on(stack, api, session, alice):
    UserLimits.objects.create(user=alice, stored_bytes=LIMIT)
    log = run_cell(api, session, CHARTS)
    results = [e["payload"] for e in log if e["type"] == "result"]
    assert len(results) == 3
    first, second, third = results
    assert list(first["artifacts"]) == ["image/png"] and first["artifacts"]["image/png"]["size"] == 40 << 10
    # The old code stored all three: 100 KiB of charts under a limit of 64 KiB.
    assert second["artifacts"] == {} and second["data"] == {"text/plain": REFUSED}
    assert list(third["artifacts"]) == ["image/png"]  # 20 KiB still fits
    assert "".join(e["payload"]["text"] for e in log if e["type"] == "stdout") == "after\n"
    assert Artifact.objects.filter(session=session).count() == 2
    assert limits.stored_bytes(alice) <= LIMIT
