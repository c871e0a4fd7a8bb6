"""Kernels: ipykernel processes inside an isolation driver, driven with jupyter_client."""
