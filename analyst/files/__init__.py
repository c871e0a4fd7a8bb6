"""What a data file holds: the describer that runs inside the sandbox (inside_sandbox/), running it and
checking its report, the reports made from it, and stored artifacts (charts, bundles).

May import: models (and the SDK, `sandboxes`).
"""
