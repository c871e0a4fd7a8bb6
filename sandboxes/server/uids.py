"""Host uids for sandboxes: each live sandbox runs as a uid (and gid, the same number) of its own.

The kernel keeps budgets per uid (epoll watches, inotify instances, keys, pipe buffers,
RLIMIT_NPROC); sandboxes sharing one uid would share them, and one could exhaust them for all.
A uid is never held by two live sandboxes. Freed uids go to the back of the queue, so the one
just released is the last to be handed out again. Nothing is recovered at a restart: sandboxd
removes every workdir it finds (their kernels died with it), so every uid is free again.
"""

from __future__ import annotations

import collections

from sandboxes.errors import CapacityExceeded


class UidRange:
    def __init__(self, base: int, count: int) -> None:
        if base <= 0 or count <= 0:
            raise ValueError("the sandbox uid range must be positive (never root)")
        self.base, self.count = base, count
        self.free = collections.deque(range(base, base + count))
        self.taken: dict[str, int] = {}

    def take(self, sandbox_id: str) -> tuple[int, int]:
        """The (uid, gid) ``sandbox_id`` runs as, until give_back."""
        if sandbox_id in self.taken:
            uid = self.taken[sandbox_id]
            return uid, uid
        if not self.free:
            raise CapacityExceeded(f"all {self.count} sandbox uids are in use")
        uid = self.free.popleft()
        self.taken[sandbox_id] = uid
        return uid, uid

    def rename(self, old_id: str, new_id: str) -> None:
        """The uid ``old_id`` holds is ``new_id``'s from now on (a pooled sandbox taking the id
        of the paused one it resumes)."""
        if old_id in self.taken:
            self.taken[new_id] = self.taken.pop(old_id)

    def give_back(self, sandbox_id: str) -> None:
        uid = self.taken.pop(sandbox_id, None)
        if uid is not None:
            self.free.append(uid)
