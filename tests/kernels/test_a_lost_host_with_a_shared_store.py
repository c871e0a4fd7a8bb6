"""When a session's sandboxd host is lost (killed), its next turn runs on another host, restored
from the session's latest snapshot through the S3 store the hosts share (moto's S3 server on
loopback), and the user is told that the host was lost and what came back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from analyst.models import AnalysisSession, KernelSnapshot
from tests.kernels.conftest import host_of, in_last_turn, lost_host_stack, run_cell
from tests.printed import printed_in_last_turn
from tests.s3_server import CREDENTIALS, s3_server
from tests.sandboxd_process import SandboxdProcess

BUCKET = "hosts-snapshots"


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    with s3_server(BUCKET) as url:
        yield url


@pytest.fixture(scope="module")
def hosts(django_db_setup: None, s3: str, model_server) -> Iterator[list[SandboxdProcess]]:
    shared = {
        **CREDENTIALS,
        "SANDBOXD_SNAPSHOT_STORE": "s3",
        "SANDBOXD_S3_BUCKET": BUCKET,
        "SANDBOXD_S3_PREFIX": "hosts/",
        "SANDBOXD_S3_ENDPOINT_URL": s3,
        "SANDBOXD_S3_REGION": "us-east-1",
    }
    with lost_host_stack(shared, model_server) as running:
        yield running


def test_the_next_turn_runs_on_another_host_with_the_variables_back(transactional_db, hosts, api, session):
    run_cell(api, session, "import pandas as pd\nframe = pd.DataFrame({'v': [1, 2, 3]})\nx = 41")
    assert KernelSnapshot.objects.filter(session=session).count() == 1
    lost = host_of(hosts, AnalysisSession.objects.get(id=session.id).sandbox_host)
    lost.crash()

    log = run_cell(api, session, "print(x + 1, int(frame.v.sum()))")
    assert printed_in_last_turn(log) == "42 6\n"
    told = in_last_turn(log, "kernel_restored", "notice")
    assert [e["type"] for e in told] == ["kernel_restored"]
    assert told[0]["payload"]["code"] == "host_lost"
    assert told[0]["payload"]["text"].startswith("The sandbox host this session ran on could not be reached;")
    assert "were restored on another host" in told[0]["payload"]["text"]
    now_on = AnalysisSession.objects.get(id=session.id).sandbox_host
    assert now_on != lost.url and now_on in [host.url for host in hosts]

    log = run_cell(api, session, "print(x + 2)")  # and it stays there, with nothing more to say
    assert printed_in_last_turn(log) == "43\n"
    assert in_last_turn(log, "kernel_restored", "notice") == []
