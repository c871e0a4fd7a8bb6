"""Sessions: who may see which, creating and deleting one, forks, branches, regenerated answers,
replays on another file, share links, exports (exports/) and the sample session (samples/).

May import: audit, connections, files, kernels, models, realtime, trust, turns, uploads, workspaces (and the
SDK, `sandboxes`).
"""
