"""The seccomp filter under gVisor: the Sentry applies the same denied calls to the guest
(``runsc --oci-seccomp``, seccomp_filter.oci_profile), each refused with EPERM, and the kernel
serves on. A guest's calls never reach the host kernel; these keep it off the Sentry's user
namespaces, mounts, keyrings and the rest that an analysis never needs.

Socket families are left to gVisor's own network stack (runsc ignores the filter's errno, and
libzmq aborts on EPERM from netlink): it has no vsock, no raw packets without a capability, and
its netlink answers from the Sentry's own tables.
"""

from __future__ import annotations

import pytest

from sandboxes.drivers import seccomp_filter
from tests.sandboxes import gvisor_service
from tests.sandboxes.test_seccomp import (
    PERSONALITY_CHANGES,
    UNLISTED_CALLS,
    assert_the_allowed_families_work,
    observe,
)

pytestmark = [pytest.mark.escape, gvisor_service.needs_runsc]


@pytest.fixture(scope="module")
def observed(gvisor_sandboxd):
    assert "isolation driver: gvisor" in gvisor_sandboxd.read_log()
    return observe(gvisor_sandboxd)


# Calls this runsc (2024) does not implement: it answers ENOSYS, and leaves them out of the filter
# it builds (it knows no number for them). A later runsc that has them filters them: EPERM.
NOT_IN_GVISOR = {"memfd_secret", "pidfd_getfd", "mount_setattr", "set_mempolicy_home_node"}


@pytest.mark.parametrize("name", [*seccomp_filter.denied_calls(), *PERSONALITY_CHANGES])
def test_denied_call_fails_with_eperm(observed, name):
    refusals = [{"result": -1, "errno": "EPERM"}]
    if name in NOT_IN_GVISOR:
        refusals.append({"result": -1, "errno": "ENOSYS"})
    assert observed["calls"][name] in refusals


def test_the_kernel_serves_on(observed):
    assert observed["serves on"] == "42"


def test_no_vsock_and_no_raw_packets(observed):
    families = observed["families"]
    assert families["AF_VSOCK"] == "EAFNOSUPPORT" and families["AF_VSOCK, upper bits set"] == "EAFNOSUPPORT"
    assert families["AF_PACKET"] == "EPERM", families


def test_allowed_families_still_open_and_work_over_the_sandboxs_loopback(observed):
    assert_the_allowed_families_work(observed["allowed"])


def test_the_personality_query_is_not_refused(observed):
    assert observed["personality query"]["errno"] != "EPERM"  # gVisor itself answers it EINVAL


# What the calls bubblewrap's allow list leaves out get here. gVisor answers from its own table,
# not the host's: a call it does not implement, or that no kernel has yet, is ENOSYS whatever the
# filter says (listmount and statmount are newer than this runsc, and than this machine's
# libseccomp, so no name of theirs reaches runsc); the NUMA calls it implements are refused by name
# (seccomp_filter.DENIED_CALLS).
UNLISTED_ANSWERS = {"listmount": "ENOSYS", "statmount": "ENOSYS", "mbind": "EPERM", "move_pages": "EPERM"}


@pytest.mark.parametrize("name", UNLISTED_CALLS)
def test_the_calls_bubblewraps_allow_list_leaves_out_are_refused_here_too(observed, name):
    expected = UNLISTED_ANSWERS.get(name, "ENOSYS")  # 600: no kernel has it
    assert observed["unlisted"][name] == {"result": -1, "errno": expected}
