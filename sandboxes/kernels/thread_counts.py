"""How many threads a kernel's parallel libraries (joblib, OpenMP, BLAS) start: its CPU limit's worth."""

from __future__ import annotations

import math
import os

from sandboxes.drivers.limits import Limits

# Each is read once, when its library loads (in the fork server's zygote before a kernel forks),
# so they go in the kernel's environment rather than into a cell.
THREAD_COUNT_VARIABLES = ("LOKY_MAX_CPU_COUNT", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def usable_cpus(limits: Limits) -> int:
    """The cores a kernel may keep busy: its CPU limit rounded up, or the host's without one."""
    if limits.cpu_cores > 0:
        return max(1, math.ceil(limits.cpu_cores))
    return os.cpu_count() or 1


def thread_count_environment(limits: Limits) -> dict[str, str]:
    """The variables that size joblib's and the BLAS libraries' pools to the sandbox. Without them
    each sees the host's cores (more threads than its quota can run) and joblib, finding no
    ``lscpu`` inside, warns "found 0 physical cores" on every first fit."""
    count = str(usable_cpus(limits))
    return dict.fromkeys(THREAD_COUNT_VARIABLES, count)
