"""A channel layer left bound to a finished test's event loop is dropped before the next test.

channels_redis's layer keeps asyncio locks that bind to the first event loop that waits on them,
and a receive cancelled while it waits for its channel's lock leaves that lock behind for good
(django/channels_redis#313). In the app each process has one loop and this costs nothing; here
each test runs its own loop, and a socket closed at that moment in one test would fail every later
receive of the process ("... is bound to a different event loop").

Only such a layer is dropped: a new layer per test would leave each old one's connections open on
the broadcast loop (analyst/realtime/broadcast.py), which never closes."""

from __future__ import annotations

from channels.layers import channel_layers


def left_behind(layer: object) -> bool:
    """A lock still counted, or a receive still counted, with no test running."""
    locks = getattr(layer, "receive_clean_locks", None)
    return bool(locks is not None and locks.wait_counts) or bool(getattr(layer, "receive_count", 0))


def drop_layers_left_behind() -> None:
    """Forget such layers; the next get_channel_layer() builds a new one."""
    for alias, layer in list(channel_layers.backends.items()):
        if left_behind(layer):
            del channel_layers.backends[alias]
