"""Assemble and run sandboxd: pick the isolation driver (fail closed), check templates, serve HTTP."""

from __future__ import annotations

import logging

import uvicorn

from sandboxes import templates
from sandboxes.drivers import choose_driver
from sandboxes.drivers.bwrap import BwrapDriver
from sandboxes.drivers.limits import probe_cgroups
from sandboxes.forkserver.driver import ForkingDriver
from sandboxes.kernels.kernel import ChannelLimits, KernelSpec
from sandboxes.server.app import build_app
from sandboxes.server.config import ServerConfig
from sandboxes.server.mounts import enter_private_namespace
from sandboxes.server.registry import Registry
from sandboxes.server.staging import Stager
from sandboxes.server.system_limits import set_open_files_limit

SHUTDOWN_GRACE_SECONDS = 5


def build_registry(config: ServerConfig) -> tuple[Registry, Stager | None]:
    """Raises DriverUnavailable, TemplateNotBuilt or PathUnreachable: sandboxd never runs code
    unsandboxed, nor as host root."""
    driver = choose_driver(config.driver, config.owner, {"gvisor": {"platform": config.gvisor_platform}})
    if config.fork_server and isinstance(driver, BwrapDriver) and config.owner:
        driver = ForkingDriver.replacing(driver)
    forked = " (kernels forked)" if isinstance(driver, ForkingDriver) else ""
    logging.getLogger(__name__).info("isolation driver: %s%s", driver.name, forked)
    built = [templates.get(name, config.templates_dir) for name in templates.available()]
    built = [template for template in built if template.is_built()]
    if not built:
        templates.get("code-interpreter", config.templates_dir).require_built()
    stager, sources, runtime_root = None, {}, None
    if config.owner:
        config.data_dir.mkdir(parents=True, exist_ok=True)
        stager = Stager(config.data_dir / "runtimes", config.owner)
        stager.clear()
        stager.check_reachable(config.data_dir, "SANDBOXD_DATA_DIR")
        for template in built:
            stager.stage_template(template)
        sources = stager.staged
        runtime_root = stager.runtime_root()
    specs = {
        template.name: KernelSpec(
            template=template,
            driver=driver,
            limits=config.limits,
            env={**config.kernel_env, **(stager.environment if stager else {})},
            owner=config.owner,
            sources=sources,
            runtime_root=runtime_root,
            relocated=stager.relocated if stager else {},
            warm_up=config.pool_warm_up,
            interrupt_grace_seconds=config.interrupt_grace or None,
            channels=ChannelLimits(
                max_message_bytes=config.max_kernel_message_bytes, queue=config.kernel_queue
            ),
        )
        for template in built
    }
    registry = Registry(config, specs)
    registry.cgroups = probe_cgroups(config.limits)
    if registry.cgroups.get("problem"):
        logging.getLogger(__name__).warning("%s", registry.cgroups["problem"])
    else:
        logging.getLogger(__name__).info("cgroups %(version)s: %(controllers)s", registry.cgroups)
    return registry, stager


def serve(config: ServerConfig) -> None:
    set_open_files_limit(config.open_files)
    if enter_private_namespace():
        logging.getLogger(__name__).info("workdirs and staging mounts are private to sandboxd")
    registry, stager = build_registry(config)
    app = build_app(registry, on_shutdown=[stager.clear] if stager else [])
    uvicorn.run(
        app,
        host=config.host,
        port=config.port,
        log_level="info",
        access_log=False,
        loop="asyncio",  # pyzmq's asyncio sockets are only tested on the standard loop
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,  # then running cells are stopped
    )
