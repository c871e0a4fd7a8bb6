"""Settings for the test run: its own Redis database, a file-backed test database a worker can share."""

import os

os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/9")
# One queue and one database file per test run, so two runs at once never share a worker.
os.environ.setdefault("CELERY_QUEUE", f"test-{os.getpid()}")
# Sessions go to the sandboxd a test starts, never to the hosts a .env lists (tests/kernels/ sets
# its own); set here, before .env is read, it reaches the workers and servers tests start too.
os.environ["SANDBOXD_HOSTS"] = ""

from config.settings import *  # noqa: E402, F403
from config.settings import BASE_DIR, DATABASES  # noqa: E402

MEDIA_ROOT = BASE_DIR / "var" / "test-media"
ANALYST_MODELS = ["anthropic/claude-test", "openai/gpt-test"]
ANALYST_DEFAULT_MODEL = "anthropic/claude-test"

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file, not memory: the Celery worker process of the integration tests opens it too.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / f"test-{os.getpid()}.sqlite3")}
