"""s3 connections give a boto3 client (and an s3fs filesystem), http ones an httpx client that
sends the secret in its header; neither shows the secret."""

from tests.connections_kernel import configs
from tests.connections_kernel.template_shell import TemplateShell
from tests.servers.http_api import ORDERS, HttpApi
from tests.servers.s3 import ORDERS_CSV, S3Store


def test_the_s3_client_and_filesystem_read_the_bucket(shell: TemplateShell, s3: S3Store):
    shell.set_egress({"files": configs.s3(s3)}, {})
    key = f"{s3.prefix}orders.csv"
    read = shell.run(
        f"body = connection('files').get_object(Bucket={s3.bucket!r}, Key={key!r})['Body'].read()\n"
        f"fs_body = connection('files', 'fs').cat({s3.bucket + '/' + key!r})\n"
        "print(body.decode(), fs_body == body, sep='|')"
    )
    assert read.error is None
    assert read.stdout == f"{ORDERS_CSV.decode()}|True\n"
    checked = shell.run(
        "import _analyst_connections, json; print(json.dumps(_analyst_connections.check('files')))"
    )
    assert checked.value()["schema"]["objects"] == [{"key": key, "size": len(ORDERS_CSV)}]


def test_a_missing_bucket_is_not_found(shell: TemplateShell, s3: S3Store):
    shell.set_egress({"files": configs.s3(s3, bucket="no-such-bucket")}, {})
    checked = shell.run(
        "import _analyst_connections, json; print(json.dumps(_analyst_connections.check('files')))"
    )
    assert (checked.value()["ok"], checked.value()["category"]) == (False, "not_found")


def test_the_http_client_sends_the_secret_header(shell: TemplateShell, api: HttpApi):
    shell.set_egress({"api": configs.http(api)}, {})
    got = shell.run(
        "import json\n"
        "client = connection('api')\n"
        "print(json.dumps({'orders': client.get('/orders').json()['orders'], 'shown': repr(client)"
        " + repr(dict(client.headers)) + repr(vars(client))}))"
    ).value()
    assert got["orders"] == ORDERS
    assert api.token not in got["shown"]
    assert api.received[-1] == ("GET", "/orders", f"Bearer {api.token}")


def test_a_wrong_token_is_auth(shell: TemplateShell, api: HttpApi):
    shell.set_egress({"api": configs.http(api, secret="not-the-token")}, {})
    checked = shell.run(
        "import _analyst_connections, json; print(json.dumps(_analyst_connections.check('api')))"
    )
    assert (checked.value()["ok"], checked.value()["category"]) == (False, "auth")
    shell.set_egress({"api": configs.http(api)}, {})
    assert shell.run("print(json.dumps(_analyst_connections.check('api')))").value()["ok"] is True
