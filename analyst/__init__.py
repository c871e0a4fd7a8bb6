"""The analyst Django app: sessions, the agent and the browser UI, one package per domain.

Each package says in its docstring what it owns and which others it may import
(tests/test_boundaries.py holds it to that); from the ground up:

    models/  lib/  dispatch.py           the tables; shared plumbing; tasks started by name
    accounts/  files/  realtime/         users' tokens and limits; what a file holds; the event log
    kernels/                             a session's sandbox, its snapshots, files and variables
    uploads/  ops/                       files coming in and placed; health and metrics
    turns/ (agent/)                      asking, running, replaying; the agent and its providers
    sessions/ (exports/, samples/)       sessions, forks, branches, shares, exports
    tasks.py                             the Celery tasks, on top of the services
    api/  web/  views.py  admin.py       the JSON API, the pages and WebSockets, /healthz and /metrics
    mcp/  management/                    the MCP server; manage.py's commands
"""
