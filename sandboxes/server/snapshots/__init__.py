"""Snapshots of sandboxes: what a snapshot is and how it is taken, stored and brought back.

- service.py: snapshot, restore and fork (the Snapshots the HTTP API calls)
- kernel_state.py: runs inside a kernel, pickling or unpickling its own namespace
- drain.py / feed.py: a namespace's bytes out of and into a kernel through a named pipe
- state_report.py: the kernel's report on what it saved, checked as untrusted output
- archive.py: the snapshot file's format; store.py: where snapshot files are kept (a snapshot's
  id is checked by ../snapshot_ids.py, which the paused sandboxes' records share)
"""
