"""Analyses that live on: an analysis's parameters, runs of it with other values (each replayed in
a session of its own), the schedules Celery beat starts them by, what a run's end reports (e-mail,
signed webhooks), and the published report that shows the latest run.

May import: accounts, connections, dispatch, kernels, models, realtime, sessions, turns, uploads,
workspaces (and the SDK, `sandboxes`).
"""
