"""Assemble and run sandboxd: pick the isolation driver (fail closed), check templates, serve HTTP."""

from __future__ import annotations

import logging

import uvicorn

from sandboxes import templates
from sandboxes.drivers import choose_driver
from sandboxes.kernels.kernel import KernelSpec
from sandboxes.server.app import build_app
from sandboxes.server.config import ServerConfig
from sandboxes.server.registry import Registry

log = logging.getLogger(__name__)


def build_registry(config: ServerConfig) -> Registry:
    """Raises DriverUnavailable or TemplateNotBuilt: sandboxd never runs code unsandboxed."""
    driver = choose_driver(config.driver)
    log.info("isolation driver: %s", driver.name)
    specs = {}
    for name in templates.available():
        template = templates.get(name, config.templates_dir)
        if template.is_built():
            specs[name] = KernelSpec(
                template=template, driver=driver, limits=config.limits, env=config.kernel_env
            )
    if not specs:
        templates.get("code-interpreter", config.templates_dir).require_built()
    return Registry(config, specs)


def serve(config: ServerConfig) -> None:
    app = build_app(build_registry(config))
    uvicorn.run(app, host=config.host, port=config.port, log_level="info", access_log=False)
