"""machines: what a node leaves a pod after GKE's reservations."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import VLLM, one, stack_problems, with_change, with_serving
from tpu_serving.backends.pathways_job.args import HeadPoolSettings
from tpu_serving.common.validation import argument_problems
from tpu_serving.platform.cluster import CpuPoolArgs


def test_machines_a_pod_that_asks_exactly_what_is_left_fits():
    """machines.Machine.fits (mutmut_2): a request equal to what the node leaves after GKE's reservations fits."""
    from tpu_serving.catalog.machines import MACHINES, SYSTEM_CPU, SYSTEM_MEMORY_BYTES

    m = MACHINES["n2-standard-8"]
    cpu, memory = m.allocatable_cpu - SYSTEM_CPU, m.allocatable_memory - SYSTEM_MEMORY_BYTES
    assert m.fits(cpu, memory)
    assert not m.fits(cpu + 0.001, memory)
    assert not m.fits(cpu, memory + 1)


# Issue 22, a new user's review: CPU machine types (machine_type_problem, the check CpuPoolArgs and
# HeadPoolSettings declare), refused by the stack file and by the components' arguments alike.


def test_machines_a_cpu_pool_machine_type_typo_lists_close_names():
    msg = one(
        stack_problems(
            with_change("tpu-serving:cluster/cpuPool", {"machineType": "n2-standrd-8"}, copy.deepcopy(VLLM))
        ),
        'tpu-serving:cluster.cpuPool.machineType = "n2-standrd-8"',
    )
    assert "did you mean n2-standard-8" in msg and "standard" in msg, msg
    msg = one(argument_problems(CpuPoolArgs(machine_type="n2-standrd-8")), "CpuPoolArgs.machine_type = 'n2-standrd-8'")
    assert "did you mean n2-standard-8" in msg, msg


@pytest.mark.parametrize("name", ["n2-standard-7", "n2standard8", "N2-standard-8"])
def test_machines_a_machine_type_outside_the_catalog_family_or_grammar_is_refused(name):
    assert argument_problems(CpuPoolArgs(machine_type=name))


@pytest.mark.parametrize(
    "name", ["c3-standard-8", "n2d-highmem-16", "e2-medium", "n2-custom-8-32768", "c3-standard-8-lssd"]
)
def test_machines_a_machine_type_of_another_family_stays_allowed(name):
    assert not argument_problems(CpuPoolArgs(machine_type=name))


def test_machines_the_pathways_head_pool_machine_type_typo_is_refused():
    msg = one(
        stack_problems(with_serving(headPool={"machineType": "n2-highmme-32"})),
        'tpu-serving:serving.headPool.machineType = "n2-highmme-32"',
    )
    assert "did you mean n2-highmem-32" in msg, msg
    msg = one(argument_problems(HeadPoolSettings(machine_type="n2-highmme-32")), "HeadPoolSettings.machine_type")
    assert "n2-highmem-32" in msg, msg
