"""What Sandbox and AsyncSandbox know of their sandbox without asking sandboxd: its info as last heard."""

from __future__ import annotations

from sandboxes.client.payloads import RestoreReport, Resumed, SandboxInfo


class BaseSandbox:
    """A sandbox's id, its latest SandboxInfo and, for one made by restore() or fork(), what came back."""

    def __init__(self, info: SandboxInfo, restore_report: RestoreReport | None) -> None:
        self._info = info
        self.sandbox_id = info.sandbox_id
        self.restore_report = restore_report

    @property
    def metadata(self) -> dict[str, str]:
        """The metadata it was made with (a restored one's defaults to its snapshot's)."""
        return self._info.metadata

    @property
    def template(self) -> str:
        """The template it was started from."""
        return self._info.template

    @property
    def resumed(self) -> Resumed | None:
        """What the last resume brought back, as last heard (``connect``, ``resume``, ``get_info``)."""
        return self._info.resumed

    def _heard(self, info: SandboxInfo) -> SandboxInfo:
        """Keep ``info`` as the latest, and return it."""
        self._info = info
        return info
