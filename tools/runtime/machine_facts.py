"""Machine shapes and what GKE leaves of a node for pods, as the runtime model knows them.

The model's own table (the library keeps another, for its fit checks; ``tests/tools/runtime/test_runtime_facts_agree.py``
compares them entry by entry). Sources:

- TPU VMs: vCPUs, memory and chips per machine type, from the Cloud TPU pages of each generation
  (https://cloud.google.com/tpu/docs/v5e, "VM types": ct5lp-hightpu-1t 24 vCPU / 48 GB, -4t 112 / 192,
  -8t 224 / 384; https://cloud.google.com/tpu/docs/v6e: ct6e-standard-1t 44 / 176, -4t 180 / 720,
  -8t 180 / 1440; https://cloud.google.com/tpu/docs/v5p: ct5p-hightpu-4t 208 / 448;
  https://docs.cloud.google.com/tpu/docs/tpu7x: the 4-chip VM 224 / 960, accelerator label tpu7x, 2x2x1 its one-VM
  topology per GKE "About Ironwood (TPU7x) in GKE" and xpk), and GKE's node labels
  and single-host topologies (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus: accelerator
  tpu-v5-lite-podslice, tpu-v6e-slice, tpu-v5p-slice; 1t = 1x1, 4t = 2x2, 8t = 2x4, v5p 4t = 2x2x1).
- General-purpose VMs: https://cloud.google.com/compute/docs/general-purpose-machines (n2-standard 4 GB,
  n2-highmem 8 GB, n2-highcpu 1 GB, e2-standard 4 GB, e2-highmem 8 GB per vCPU; the sizes each offers).
  Compute Engine's "GB" of machine memory are GiB.
- Allocatable: https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes ("Memory and CPU
  reservations": 25% of the first 4 GiB of memory, 20% of the next 4, 10% of the next 8, 6% of the next 112,
  2% above 128 GiB, 255 MiB below 1 GiB; CPU 6% of the first core, 1% of the next, 0.5% of the next 2,
  0.25% above 4; and 100 MiB for the kubelet's hard eviction threshold).
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 2**30


@dataclass(frozen=True)
class TpuMachine:
    vcpus: int
    memory_gib: float
    chips: int
    accelerator: str
    single_host_topology: str


TPU_MACHINES: dict[str, TpuMachine] = {
    "ct5lp-hightpu-1t": TpuMachine(24, 48, 1, "tpu-v5-lite-podslice", "1x1"),
    "ct5lp-hightpu-4t": TpuMachine(112, 192, 4, "tpu-v5-lite-podslice", "2x2"),
    "ct5lp-hightpu-8t": TpuMachine(224, 384, 8, "tpu-v5-lite-podslice", "2x4"),
    "ct6e-standard-1t": TpuMachine(44, 176, 1, "tpu-v6e-slice", "1x1"),
    "ct6e-standard-4t": TpuMachine(180, 720, 4, "tpu-v6e-slice", "2x2"),
    "ct6e-standard-8t": TpuMachine(180, 1440, 8, "tpu-v6e-slice", "2x4"),
    "ct5p-hightpu-4t": TpuMachine(208, 448, 4, "tpu-v5p-slice", "2x2x1"),
    "tpu7x-standard-4t": TpuMachine(224, 960, 4, "tpu7x", "2x2x1"),
}

GENERAL_FAMILIES: dict[str, tuple[float, tuple[int, ...]]] = {
    "n2-standard": (4, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)),
    "n2-highmem": (8, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)),
    "n2-highcpu": (1, (2, 4, 8, 16, 32, 48, 64, 80, 96)),
    "e2-standard": (4, (2, 4, 8, 16, 32)),
    "e2-highmem": (8, (2, 4, 8, 16)),
}
"""GiB of memory per vCPU, and the vCPU counts offered."""

EVICTION_THRESHOLD_BYTES = 100 * 2**20
SYSTEM_CPU = 0.5
SYSTEM_MEMORY_BYTES = 1 * GIB
"""The model's allowance for GKE's system DaemonSets on every node: an estimate (their requests are not
published and change between GKE versions), erring on the large side."""


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
    cpu = vcpus - _tiered(vcpus, ((1, 0.06), (1, 0.01), (2, 0.005), (float("inf"), 0.0025)))
    reserved = (
        255 / 1024 if gib < 1 else _tiered(gib, ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (float("inf"), 0.02)))
    )
    return cpu, (gib - reserved) * GIB - EVICTION_THRESHOLD_BYTES
