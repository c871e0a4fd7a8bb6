"""`python manage.py sandboxd`: run the sandbox service with the project's settings."""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from sandboxes.drivers.base import DriverUnavailable
from sandboxes.drivers.limits import Limits
from sandboxes.server.config import ServerConfig
from sandboxes.server.serve import serve
from sandboxes.server.snapshots.store import StoreMisconfigured
from sandboxes.server.staging import PathUnreachable
from sandboxes.templates import TemplateNotBuilt


def config_from_settings() -> ServerConfig:
    url = urlsplit(settings.SANDBOXD_URL)
    if not settings.SANDBOXD_TOKEN:
        raise CommandError("SANDBOXD_TOKEN is not set (make setup writes one to .env)")
    return ServerConfig(
        token=settings.SANDBOXD_TOKEN,
        host=url.hostname or "127.0.0.1",
        port=url.port or 8787,
        driver=settings.SANDBOXD_DRIVER,
        fork_server=settings.SANDBOXD_FORK_SERVER,
        gvisor_platform=settings.SANDBOXD_GVISOR_PLATFORM,
        templates_dir=settings.SANDBOXD_TEMPLATES_DIR,
        data_dir=settings.SANDBOXD_DATA_DIR,
        pool_size=settings.SANDBOXD_POOL_SIZE,
        pool_max_size=settings.SANDBOXD_POOL_MAX,
        pool_idle_seconds=settings.SANDBOXD_POOL_IDLE,
        pool_warm_up=settings.SANDBOXD_POOL_WARM_UP,
        context_spare_seconds=settings.SANDBOXD_CONTEXT_SPARE,
        max_sandboxes=settings.SANDBOXD_MAX_SANDBOXES,
        idle_pause_seconds=settings.SANDBOXD_IDLE_PAUSE,
        pause_hold_limit_seconds=settings.SANDBOXD_PAUSE_HOLD_LIMIT,
        memory_reserve_bytes=settings.SANDBOXD_MEMORY_RESERVE,
        idle_cpu_seconds=settings.SANDBOXD_IDLE_CPU_SECONDS,
        idle_cpu_window_seconds=settings.SANDBOXD_IDLE_CPU_WINDOW,
        open_files=settings.SANDBOXD_OPEN_FILES,
        default_ttl_seconds=settings.SANDBOXD_DEFAULT_TTL,
        max_ttl_seconds=settings.SANDBOXD_MAX_TTL,
        default_cell_timeout=settings.SANDBOXD_CELL_TIMEOUT,
        interrupt_grace=settings.SANDBOXD_INTERRUPT_GRACE,
        stdout_limit_bytes=settings.SANDBOXD_STDOUT_LIMIT,
        results_limit_bytes=settings.SANDBOXD_RESULTS_LIMIT,
        max_kernel_message_bytes=settings.SANDBOXD_MAX_KERNEL_MESSAGE,
        kernel_queue=settings.SANDBOXD_KERNEL_QUEUE,
        list_limit=settings.SANDBOXD_LIST_LIMIT,
        max_upload_bytes=settings.SANDBOXD_MAX_UPLOAD,
        snapshot_dir=settings.SANDBOXD_SNAPSHOT_DIR,
        snapshot_max_bytes=settings.SANDBOXD_SNAPSHOT_MAX_BYTES,
        restore_limit_seconds=settings.SANDBOXD_RESTORE_LIMIT,
        snapshot_store=settings.SANDBOXD_SNAPSHOT_STORE,
        s3_bucket=settings.SANDBOXD_S3_BUCKET,
        s3_prefix=settings.SANDBOXD_S3_PREFIX,
        s3_endpoint_url=settings.SANDBOXD_S3_ENDPOINT_URL,
        s3_region=settings.SANDBOXD_S3_REGION,
        kernel_env=settings.SANDBOXD_KERNEL_ENV,
        egress_allow=tuple(settings.SANDBOXD_EGRESS_ALLOW),
        egress_loopback=settings.SANDBOXD_EGRESS_LOOPBACK,
        uid_base=settings.SANDBOXD_UID_BASE,
        uid_count=settings.SANDBOXD_UID_COUNT,
        limits=Limits(
            memory_bytes=settings.SANDBOXD_MEMORY_LIMIT,
            max_processes=settings.SANDBOXD_PROCESS_LIMIT,
            disk_bytes=settings.SANDBOXD_DISK_LIMIT,
            cpu_cores=settings.SANDBOXD_CPU_LIMIT,
        ),
    )


class Command(BaseCommand):
    help = "Run the sandbox service (sandboxd) at SANDBOXD_URL."

    def handle(self, *args: object, **options: object) -> None:
        try:
            serve(config_from_settings())
        except (DriverUnavailable, TemplateNotBuilt, PathUnreachable, StoreMisconfigured) as exc:
            self.stderr.write(f"sandboxd will not start: {exc}")
            sys.exit(2)
