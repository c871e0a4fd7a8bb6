"""A kernel's parallel libraries see its CPU limit (1 core in tests), not the host's cores, and
scikit-learn no longer warns that joblib "found 0 physical cores"."""

from __future__ import annotations

import os

import pytest

# Run the way a user's cell runs, warnings shown as the kernel shows them (on stderr, once each).
FIT = """
import joblib, numpy
from sklearn.cluster import KMeans
KMeans(n_clusters=2, n_init=2).fit(numpy.random.default_rng(0).random((200, 2)))
print(joblib.cpu_count(), joblib.cpu_count(only_physical_cores=True))
"""

POOLS = """
from threadpoolctl import threadpool_info
print(sorted({pool["num_threads"] for pool in threadpool_info()}))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a 1-core host: the limit equals the host's count")
def test_joblib_and_blas_see_the_sandbox_cpu_limit(sandbox):
    execution = sandbox.run_code(FIT)
    assert execution.error is None, execution.error
    assert "physical cores" not in execution.stderr, execution.stderr
    assert execution.stderr == ""
    assert execution.stdout == "1 1\n"
    pools = sandbox.run_code(POOLS)
    assert pools.error is None, pools.error
    assert pools.stdout == "[1]\n"  # OpenBLAS and OpenMP each start one thread, not one a host core
