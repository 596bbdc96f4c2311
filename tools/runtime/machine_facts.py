"""Machine shapes and what GKE leaves of a node for pods, as the runtime model knows them.

The model's own table: the values and their sources are in ``data/machines.json`` (the library keeps another, for
its fit checks; ``tests/tools/runtime/test_runtime_facts_agree.py`` compares them entry by entry).
"""

from __future__ import annotations

from dataclasses import dataclass

from tpu_serving_tools.runtime import sourced as _sourced

GIB = 2**30


@dataclass(frozen=True)
class TpuMachine:
    vcpus: int
    memory_gib: float
    chips: int
    accelerator: str
    single_host_topology: str


_T = _sourced.table("machines")

TPU_MACHINES: dict[str, TpuMachine] = _T.get("TPU_MACHINES", dict[str, TpuMachine])
GENERAL_FAMILIES: dict[str, tuple[float, tuple[int, ...]]] = _T.get(
    "GENERAL_FAMILIES", dict[str, tuple[float, tuple[int, ...]]]
)
"""GiB of memory per vCPU, and the vCPU counts offered."""

CPU_RESERVATION_TIERS: tuple[tuple[float, float], ...] = _T.get(
    "CPU_RESERVATION_TIERS", tuple[tuple[float, float], ...]
)
MEMORY_RESERVATION_TIERS: tuple[tuple[float, float], ...] = _T.get(
    "MEMORY_RESERVATION_TIERS", tuple[tuple[float, float], ...]
)
SMALL_NODE_MEMORY_GIB = _T.integer("SMALL_NODE_MEMORY_GIB")
SMALL_NODE_RESERVED_MIB = _T.integer("SMALL_NODE_RESERVED_MIB")
EVICTION_THRESHOLD_BYTES = _T.integer("EVICTION_THRESHOLD_BYTES")
SYSTEM_CPU = _T.get("SYSTEM_CPU", float)
SYSTEM_MEMORY_BYTES = _T.integer("SYSTEM_MEMORY_BYTES")


def shape(machine_type: str) -> tuple[int, float] | None:
    """(vCPUs, GiB of memory) of ``machine_type``, or None when the model does not know it."""
    if machine_type in TPU_MACHINES:
        m = TPU_MACHINES[machine_type]
        return m.vcpus, m.memory_gib
    family, _, size = machine_type.rpartition("-")
    if family in GENERAL_FAMILIES and size.isdigit() and int(size) in GENERAL_FAMILIES[family][1]:
        return int(size), int(size) * GENERAL_FAMILIES[family][0]
    return None


def _tiered(amount: float, tiers: tuple[tuple[float, float], ...]) -> float:
    reserved, left = 0.0, amount
    for size, share in tiers:
        used = min(left, size)
        reserved += used * share
        left -= used
    return reserved


def allocatable(machine_type: str) -> tuple[float, float] | None:
    """(CPU cores, memory bytes) GKE leaves for pods on a node of ``machine_type``, before system DaemonSets."""
    known = shape(machine_type)
    if known is None:
        return None
    vcpus, gib = known
    cpu = vcpus - _tiered(vcpus, CPU_RESERVATION_TIERS)
    reserved = SMALL_NODE_RESERVED_MIB / 1024 if gib < SMALL_NODE_MEMORY_GIB else _tiered(gib, MEMORY_RESERVATION_TIERS)
    return cpu, (gib - reserved) * GIB - EVICTION_THRESHOLD_BYTES
