"""End to end in a real sandbox: sandboxd's egress (its forwarders and proxy, set through the SDK)
carries the kernel's connections to the real servers, with the config the web app would send."""

import json

from sandboxes import Sandbox
from tests.connections_kernel import configs
from tests.servers.database import ORDER_ROWS, Database
from tests.servers.http_api import ORDERS, HttpApi
from tests.servers.s3 import ORDERS_CSV, S3Store


def test_every_kind_reaches_its_server(
    sandbox: Sandbox, postgres: Database, mariadb: Database, api: HttpApi, s3: S3Store
) -> None:
    api_port, s3_port = int(api.url.rsplit(":", 1)[1]), int(s3.endpoint_url.rsplit(":", 1)[1])
    endpoints = [
        {"name": "warehouse", "host": "127.0.0.1", "port": postgres.port, "mode": "tcp"},
        {"name": "shop", "host": "127.0.0.1", "port": mariadb.port, "mode": "tcp"},
        {"name": "api", "host": "127.0.0.1", "port": api_port, "mode": "http"},
        {"name": "files", "host": "127.0.0.1", "port": s3_port, "mode": "http"},
    ]
    connections = {
        "warehouse": configs.postgres(postgres),
        "shop": configs.mysql(mariadb),
        "api": configs.http(api),
        "files": configs.s3(s3),
    }
    sandbox.set_egress(endpoints, {"connections": connections, "sql_timeout": 30, "sql_max_rows": 1000})
    counted = sandbox.run_code(
        "[len(sql('warehouse', 'select id from orders')), len(sql('shop', 'select id from orders'))]"
    )
    assert counted.error is None, counted.error
    assert counted.text == f"[{ORDER_ROWS}, {ORDER_ROWS}]"
    orders = sandbox.run_code(
        "import json\nprint(json.dumps(connection('api').get('/orders').json()['orders']))"
    )
    assert json.loads(orders.stdout) == ORDERS
    key = s3.prefix + "orders.csv"
    body = sandbox.run_code(
        f"connection('files').get_object(Bucket={s3.bucket!r}, Key={key!r})['Body'].read()"
    )
    assert body.text == repr(ORDERS_CSV)
    checked = sandbox.run_code(
        "import _analyst_connections\n"
        "[_analyst_connections.check(n)['ok'] for n in ('warehouse', 'shop', 'api', 'files')]"
    )
    assert checked.text == "[True, True, True, True]"
