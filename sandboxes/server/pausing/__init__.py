"""Pause and resume: an idle sandbox's kernels are stopped and kept as a snapshot; any use resumes it."""
