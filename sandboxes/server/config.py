"""sandboxd's configuration: one immutable object built by the management command."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sandboxes.drivers.limits import Limits


@dataclass(frozen=True)
class ServerConfig:
    token: str
    templates_dir: Path
    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 8787
    driver: str = "auto"
    fork_server: bool = True  # bubblewrap as root: kernels forked from a zygote per template
    gvisor_platform: str = "systrap"  # runsc --platform
    limits: Limits = field(default_factory=Limits)
    pool_size: int = 2  # kept ready at least
    pool_max_size: int = 8  # while sandboxes are taken faster than one warms up
    pool_idle_seconds: float = 120.0  # without a take, back to pool_size
    pool_warm_up: bool = True  # pooled kernels run their template's warm.py while they wait
    pool_templates: tuple[str, ...] = ("code-interpreter",)
    context_spare_seconds: float = 120.0  # a kernel kept started for a sandbox's next new context (0: none)
    default_ttl_seconds: int = 300
    max_ttl_seconds: int = 24 * 3600
    default_cell_timeout: float = 300.0
    interrupt_grace: float = 0.0  # an interrupted cell's, then its kernel is restarted; 0: the driver's
    stdout_limit_bytes: int = 1 << 20
    results_limit_bytes: int = 16 << 20  # a cell's results and errors, then one marker
    max_kernel_message_bytes: int = 8 << 20  # a larger message from a kernel is dropped
    kernel_queue: int = 2  # messages queued per kernel socket while sandboxd is not reading
    list_limit: int = 1000  # entries in one page of a folder listing (at most 10 times more)
    max_upload_bytes: int = 512 << 20
    snapshot_dir: Path | None = None  # default: <data_dir>/snapshots
    snapshot_max_bytes: int = 2 << 30
    restore_limit_seconds: float = 5.0  # unpickling a context's variables at a restore, then left out
    # Where snapshots are kept: "local" (snapshot_dir) or "s3" (a bucket several hosts share).
    snapshot_store: str = "local"
    s3_bucket: str = ""
    s3_prefix: str = "snapshots/"
    s3_endpoint_url: str = ""  # for an S3-compatible service other than AWS (MinIO, Ceph)
    s3_region: str = ""
    max_sandboxes: int = 64  # running at once; paused ones count against no cap but disk
    idle_pause_seconds: float = 600.0  # a sandbox unused this long is paused
    pause_hold_limit_seconds: float = 3600.0  # a user's thread keeps it running at most this long
    # CPU seconds a sandbox may burn within the window while no cell runs, then it is paused (0: no limit)
    idle_cpu_seconds: float = 30.0
    idle_cpu_window_seconds: float = 60.0
    memory_reserve_bytes: int = 512 << 20  # below this much available memory, idle ones are paused
    open_files: int = 1 << 20  # sandboxd's own limit, set at start (a kernel holds ~18 of them)
    kernel_env: Mapping[str, str] = field(default_factory=dict)
    # Egress (sandboxes/server/egress): hosts ("host" or "host:port") every sandbox's proxy
    # admits, and whether endpoints may resolve to this host's loopback addresses.
    egress_allow: tuple[str, ...] = ()
    egress_loopback: bool = False
    # When sandboxd is root, each sandbox runs as an unprivileged host user of its own, from
    # uid_base to uid_base + uid_count - 1 (its gid the same number), and owns its files.
    uid_base: int | None = None
    uid_count: int = 4096
    reap_interval_seconds: float = 1.0

    @property
    def snapshots_root(self) -> Path:
        return self.snapshot_dir or self.data_dir / "snapshots"

    @property
    def owner(self) -> tuple[int, int] | None:
        """The first (uid, gid) of the sandbox range (what probes and reachability checks run as),
        or None when sandboxes run as us and their files stay ours."""
        if self.uid_base is None or os.geteuid() != 0:
            return None
        return self.uid_base, self.uid_base
