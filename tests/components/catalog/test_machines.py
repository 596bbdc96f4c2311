"""machines: what a node leaves a pod after GKE's reservations."""

from __future__ import annotations


def test_machines_a_pod_that_asks_exactly_what_is_left_fits():
    """machines.Machine.fits (mutmut_2): a request equal to what the node leaves after GKE's reservations fits."""
    from tpu_serving.catalog.machines import MACHINES, SYSTEM_CPU, SYSTEM_MEMORY_BYTES

    m = MACHINES["n2-standard-8"]
    cpu, memory = m.allocatable_cpu - SYSTEM_CPU, m.allocatable_memory - SYSTEM_MEMORY_BYTES
    assert m.fits(cpu, memory)
    assert not m.fits(cpu + 0.001, memory)
    assert not m.fits(cpu, memory + 1)
