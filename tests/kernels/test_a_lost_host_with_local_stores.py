"""With local snapshot stores a snapshot exists only on the host that took it: when that host is
lost, the session's next turn runs in a fresh kernel on another host, with its uploads written
again, and the user is told that the host was lost and the variables are gone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from analyst.models import AnalysisSession, KernelSnapshot
from tests import made_files
from tests.api.conftest import upload
from tests.integration.test_uploads_of_every_shape import added
from tests.kernels.conftest import host_of, in_last_turn, lost_host_stack, run_cell
from tests.printed import printed_in_last_turn
from tests.sandboxd_process import SandboxdProcess


@pytest.fixture(scope="module")
def hosts(django_db_setup: None, model_server) -> Iterator[list[SandboxdProcess]]:
    with lost_host_stack({}, model_server) as running:
        yield running


def test_the_next_turn_runs_in_a_fresh_kernel_on_another_host_with_the_uploads(
    transactional_db, hosts, api, session
):
    assert upload(api, session, "sales.csv", made_files.SALES_CSV).status_code == 202
    added(session, "sales.csv")
    run_cell(api, session, "x = 41")
    assert KernelSnapshot.objects.filter(session=session).count() == 1
    lost = host_of(hosts, AnalysisSession.objects.get(id=session.id).sandbox_host)
    lost.crash()

    log = run_cell(api, session, "import os\nprint(sorted(os.listdir('data')), 'x' in globals())")
    assert printed_in_last_turn(log) == "['sales.csv'] False\n"
    told = in_last_turn(log, "kernel_restored", "notice")
    assert [e["type"] for e in told] == ["notice"]
    text = told[0]["payload"]["text"]
    assert text.startswith(
        "The sandbox host this session ran on could not be reached, and its saved state was kept on"
        " that host alone"
    )
    assert "continues in a fresh one on another host: variables from earlier cells are gone" in text
    assert "uploaded files are restored" in text
    now_on = AnalysisSession.objects.get(id=session.id).sandbox_host
    assert now_on != lost.url and now_on in [host.url for host in hosts]
