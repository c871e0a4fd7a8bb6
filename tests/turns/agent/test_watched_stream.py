"""watched(): a blocking producer read beside the caller, who can give up on it at once."""

import threading
import time

import pytest

from analyst.turns.agent.watched_stream import watched


class Stop(Exception):
    pass


def test_items_arrive_in_order_and_the_end_ends_the_iteration():
    def produce(put):
        for number in range(5):
            put(number)

    assert list(watched(produce, check=lambda: None, poll=0.01)) == [0, 1, 2, 3, 4]


def test_the_producers_exception_is_raised_to_the_reader_after_its_items():
    def produce(put):
        put("first")
        raise ValueError("the stream broke")

    got = []
    with pytest.raises(ValueError, match="the stream broke"):
        for item in watched(produce, check=lambda: None, poll=0.01):
            got.append(item)
    assert got == ["first"]


def test_check_ends_the_wait_on_a_producer_that_hangs():
    # A model that sends nothing: its read would block for the whole read timeout.
    release = threading.Event()
    checks = []

    def produce(put):
        put("started")
        release.wait(30)
        put("too late")

    def check():
        checks.append(1)
        if len(checks) == 3:
            raise Stop

    got = []
    with pytest.raises(Stop):
        for item in watched(produce, check=check, poll=0.02):
            got.append(item)
    assert got == ["started"]
    assert len(checks) == 3, "check runs on each quiet poll, and its raise ends the wait"
    release.set()


def test_an_abandoned_producer_stops_at_its_next_item():
    produced = []
    ended = threading.Event()

    def produce(put):
        try:
            for number in range(1000):
                produced.append(number)
                put(number)
                time.sleep(0.001)
        finally:
            ended.set()

    stream = watched(produce, check=lambda: None, poll=0.01)
    assert next(stream) == 0
    stream.close()
    assert ended.wait(5), "the producer ended soon after the reader closed"
    assert len(produced) < 1000
