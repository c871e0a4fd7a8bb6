"""A session's kernel: the sandboxd hosts, the session's sandbox (started, resumed, replaced), the
sandboxes a worker keeps connected, snapshots of kernel state, the limit on running kernels, and the
files and variables of a live sandbox. Reaches sandboxd only through the SDK (`sandboxes`).

May import: accounts, connections, files, lib, models (and the SDK, `sandboxes`).
"""
