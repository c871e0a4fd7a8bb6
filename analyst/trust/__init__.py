"""Trust in an analysis: the figures of an answer traced to the outputs they came from, what the
model may see of private data (privacy modes, sensitive columns), cells a person approves before
they run, and the instructions and data dictionary a user saves for the model.

May import: files, lib, models, realtime (and the SDK, `sandboxes`).
"""
