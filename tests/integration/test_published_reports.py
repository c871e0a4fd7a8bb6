"""A published report follows the runs of its analysis: two runs with other values, one after
the other, on the real worker and kernels; /r/<token> shows the latest run's output, lists both
as versions and says which figure changed; /r/<token>.json carries the latest values and table;
the revoked link is refused."""

from __future__ import annotations

from django.test import Client

from tests.integration.test_resume_and_fork import run_cell
from tests.integration.test_runs_with_parameters import finished_run

PARAMETERS_CELL = "threshold = 5"
TOTAL = "print(f'total {sum(x * 100 for x in range(100) if x > threshold):,}')"
TABLE = "import pandas as pd\npd.DataFrame({'over': [threshold], 'count': [99 - threshold]})"


def run_with(api, session, threshold: int) -> dict:
    started = api.post(
        f"/api/sessions/{session.id}/runs", {"parameters": {"threshold": threshold}}, "application/json"
    )
    assert started.status_code == 202, started.content
    run = finished_run(api, started.json()["id"])
    assert run["status"] == "done", run
    return run


def test_a_published_report_shows_the_latest_run_and_what_changed(stack, api, session):
    for code in (PARAMETERS_CELL, TOTAL, TABLE):
        run_cell(api, session, code)
    api.put(f"/api/sessions/{session.id}/parameters", {"code": PARAMETERS_CELL}, "application/json")
    published = api.post(f"/api/sessions/{session.id}/publish", {}, "application/json")
    assert published.status_code == 201, published.content
    url = published.json()["url"]
    reader = Client()  # anonymous

    before = reader.get(url).content.decode()
    assert "total 493,500" in before and "No run of this analysis has finished yet" in before

    first = run_with(api, session, 10)
    second = run_with(api, session, 20)
    assert api.get(f"/api/sessions/{session.id}/publish").json()["versions"] == 2

    page = reader.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    masthead, report = html.split("</section>", 1)
    assert "total 474,000" in report and "total 489,500" not in report
    assert "with threshold = 20" in masthead
    versions = masthead.split('data-testid="published-versions">')[1].split("</ol>")[0]
    assert versions.count("<li") == 2
    assert versions.index(f"{url}?version={second['id']}") < versions.index(f"{url}?version={first['id']}")
    changes = masthead.split('data-testid="published-changes">')[1].split("</ul>")[0]
    assert "cell 2: 489,500 → 474,000" in changes
    assert "cell 3: 10 → 20" in changes and "cell 3: 89 → 79" in changes  # the table's text

    earlier = reader.get(f"{url}?version={first['id']}").content.decode()
    assert "total 489,500" in earlier and "This is the first run." in earlier

    data = reader.get(f"{url}.json").json()
    assert data["version"]["run"] == second["id"] and data["version"]["parameters"] == {"threshold": 20}
    assert data["version"]["finished_at"] == second["finished_at"]
    outputs = {output["cell"]: output["text"] for output in data["outputs"]}
    assert outputs[2] == "total 474,000\n"
    [table] = data["tables"]
    assert table["cell"] == 3
    assert [column["name"] for column in table["columns"]] == ["index", "over", "count"]
    assert table["rows"] == [{"index": 0, "over": 20, "count": 79}]

    assert api.delete(f"/api/sessions/{session.id}/publish").status_code == 204
    assert reader.get(url).status_code == 404
    assert reader.get(f"{url}.json").status_code == 404
