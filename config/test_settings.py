"""Settings for the test run: its own Redis database, a file-backed test database a worker can share."""

import os

os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/9")
os.environ.setdefault("CELERY_QUEUE", f"test-{os.getpid()}")
# Under pytest-xdist each worker (gw0, gw1, ...) is a test run of its own, though it inherits the
# environment of the process that started it: its own Redis database (the Channels layer,
# heartbeats, login counters and metrics are never another worker's), its own Celery queue, and
# its own range of sandbox uids for every sandboxd its tests start (below 65534, nobody). Set
# here, these reach the servers and workers the tests start too; a second read changes nothing.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if WORKER:
    index = int(WORKER.removeprefix("gw"))
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:6379/{9 + index}"
    if not os.environ["CELERY_QUEUE"].endswith(f"-{WORKER}"):
        os.environ["CELERY_QUEUE"] += f"-{WORKER}"
    os.environ["SANDBOXD_UID_BASE"] = str(61000 + 1100 * index)
    os.environ["SANDBOXD_UID_COUNT"] = "1100"  # three workers' ranges end below 64300
# The key connections' secrets are sealed with, the same for the tests and every worker they start
# (whose SECRET_KEY is their own), as a deployment's processes share theirs.
os.environ.setdefault("ANALYST_CONNECTIONS_KEY", "dGVzdHMtb25seS1rZXktbmV2ZXItaW4tYS1kZXBsb3k=")
# Sessions go to the sandboxd a test starts, never to the hosts a .env lists (tests/kernels/ sets
# its own); set here, before .env is read, it reaches the workers and servers tests start too.
os.environ["SANDBOXD_HOSTS"] = ""

from config.settings import *  # noqa: E402, F403
from config.settings import BASE_DIR, DATABASES  # noqa: E402

MEDIA_ROOT = BASE_DIR / "var" / "-".join(filter(None, ("test-media", WORKER)))
ANALYST_MODELS = ["anthropic/claude-test", "openai/gpt-test"]
ANALYST_DEFAULT_MODEL = "anthropic/claude-test"

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file, not memory: the Celery worker process of the integration tests opens it too.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / f"test-{os.getpid()}.sqlite3")}
