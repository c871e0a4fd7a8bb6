"""Operations: the health checks behind /healthz and the metrics behind /metrics.

May import: kernels, lib, models (and the SDK, `sandboxes`).
"""
