"""A receive cancelled while it waits for its channel's lock (a socket closed just after a
message) leaves channels_redis's layer bound to that test's loop; such a layer is dropped after each
test (tests/channel_layers.py), which keeps the next test's sockets working."""

from __future__ import annotations

import asyncio

from channels.layers import get_channel_layer

from tests.channel_layers import drop_layers_left_behind


async def leave_a_lock_behind() -> None:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    lock_key = layer.prefix + layer.non_local_name(channel)
    await layer.send(channel, {"type": "first"})
    await layer.receive(channel)  # its cleaner now holds the channel's lock for a moment
    waiter = asyncio.create_task(layer.receive(channel))
    while layer.receive_clean_locks.wait_counts.get(lock_key) != 2:  # the waiter waits for it
        await asyncio.sleep(0)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    await asyncio.sleep(0.2)  # the cleaner is done
    assert layer.receive_clean_locks.wait_counts[lock_key] == 1, "the lock is not left behind"


async def receive_two() -> list[str]:
    """As the next test's socket does: its channel shares the process's lock."""
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "second"})
    await layer.send(channel, {"type": "third"})
    return [(await layer.receive(channel))["type"] for _ in range(2)]


def test_a_lock_left_in_one_loop_does_not_reach_the_next_test():
    asyncio.run(leave_a_lock_behind())
    drop_layers_left_behind()  # as the autouse fixture does after each test
    assert asyncio.run(receive_two()) == ["second", "third"]
