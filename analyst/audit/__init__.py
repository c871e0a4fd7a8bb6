"""The audit log: who read or changed which workspace's data, when and from which address (sign-ins,
asks, cells, uploads, downloads, exports, shares, forks, connections, secrets, members); reading it
by workspace with filters and pages; pruning what is older than ANALYST_AUDIT_DAYS.

May import: lib, models.
"""
