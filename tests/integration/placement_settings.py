"""A worker's settings for the placement tests: config.settings with retries short enough to wait for."""

import os

from config.settings import *  # noqa: F403

ANALYST_PLACE_TRIES = int(os.environ.get("TEST_PLACE_TRIES", "3"))
ANALYST_PLACE_BACKOFF = float(os.environ.get("TEST_PLACE_BACKOFF", "0.2"))
