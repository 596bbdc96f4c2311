"""Compute Engine machine types and what GKE leaves of them for pods (node allocatable).

Pure data plus the documented reservation formula, used to refuse a node pool whose nodes
cannot hold the pods that must run there, and by the runtime model to place pods.

Sources:
- machine shapes: Compute Engine general-purpose machine families
  (https://cloud.google.com/compute/docs/general-purpose-machines: n2-standard 4 GB,
  n2-highmem 8 GB, n2-highcpu 1 GB, e2-standard 4 GB per vCPU); TPU VMs: the Cloud TPU
  pages of each generation (https://cloud.google.com/tpu/docs/v5e,
  https://cloud.google.com/tpu/docs/v6e, https://cloud.google.com/tpu/docs/v5p).
  Compute Engine's "GB" of memory are GiB (the API reports memoryMb = 1024 x GB).
- reservations: GKE "Node allocatable resources"
  (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_and_cpu_reservations).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

GIB = 2**30


@dataclass(frozen=True)
class Machine:
    """A machine type's vCPUs and memory."""

    name: str
    vcpus: int
    memory_gib: float

    @property
    def allocatable_cpu(self) -> float:
        """vCPUs left for pods after GKE's CPU reservation."""
        return self.vcpus - cpu_reservation(self.vcpus)

    @property
    def allocatable_memory(self) -> float:
        """Bytes left for pods after GKE's memory reservation and the 100 MiB eviction threshold."""
        return (self.memory_gib - memory_reservation_gib(self.memory_gib)) * GIB - EVICTION_THRESHOLD_BYTES

    def fits(self, cpu: float, memory_bytes: float) -> bool:
        """Whether one pod requesting ``cpu`` and ``memory_bytes`` fits an empty node of this type."""
        return (
            cpu <= self.allocatable_cpu - SYSTEM_CPU and memory_bytes <= self.allocatable_memory - SYSTEM_MEMORY_BYTES
        )


EVICTION_THRESHOLD_BYTES = 100 * 2**20
"""GKE reserves 100 MiB for kubelet's hard eviction threshold (same page)."""

SYSTEM_CPU = 0.5
SYSTEM_MEMORY_BYTES = 1 * GIB
"""Allowance for the GKE system DaemonSets on every node (Dataplane V2's anetd, fluentbit,
gke-metadata-server, the GCS FUSE and PD CSI node plugins, netd, ...). An estimate, not a
documented figure: their requests are not published and change between GKE versions, so
the allowance errs on the large side."""


def cpu_reservation(vcpus: int) -> float:
    """GKE's CPU reservation: 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% above 4."""
    tiers = ((1, 0.06), (1, 0.01), (2, 0.005), (float("inf"), 0.0025))
    return _tiered(vcpus, tiers)


def memory_reservation_gib(memory_gib: float) -> float:
    """GKE's memory reservation: 255 MiB below 1 GiB; else 25% of the first 4 GiB, 20% of the
    next 4, 10% of the next 8, 6% of the next 112 and 2% above 128 GiB."""
    if memory_gib < 1:
        return 255 / 1024
    tiers = ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (float("inf"), 0.02))
    return _tiered(memory_gib, tiers)


def _tiered(amount: float, tiers: tuple[tuple[float, float], ...]) -> float:
    reserved, left = 0.0, amount
    for size, share in tiers:
        used = min(left, size)
        reserved += used * share
        left -= used
        if left <= 0:
            break
    return reserved


_FAMILIES: dict[str, tuple[float, tuple[int, ...]]] = {
    "n2-standard": (4, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)),
    "n2-highmem": (8, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)),
    "n2-highcpu": (1, (2, 4, 8, 16, 32, 48, 64, 80, 96)),
    "e2-standard": (4, (2, 4, 8, 16, 32)),
    "e2-highmem": (8, (2, 4, 8, 16)),
}
"""General-purpose families: GiB of memory per vCPU, and the vCPU counts offered."""

_TPU_VMS: tuple[Machine, ...] = (
    Machine("ct5lp-hightpu-1t", 24, 48),
    Machine("ct5lp-hightpu-4t", 112, 192),
    Machine("ct5lp-hightpu-8t", 224, 384),
    Machine("ct6e-standard-1t", 44, 176),
    Machine("ct6e-standard-4t", 180, 720),
    Machine("ct6e-standard-8t", 180, 1440),
    Machine("ct5p-hightpu-4t", 208, 448),
    # Cloud TPU "TPU7x (Ironwood)" (https://docs.cloud.google.com/tpu/docs/tpu7x): "Number of vCPUs (4-chip VM)" 224,
    # "RAM (GB) (4-chip VM)" 960. No figure for tpu7x-standard-1t was read here.
    Machine("tpu7x-standard-4t", 224, 960),
)

MACHINES: dict[str, Machine] = {
    **{
        f"{family}-{n}": Machine(f"{family}-{n}", n, n * per_vcpu)
        for family, (per_vcpu, sizes) in _FAMILIES.items()
        for n in sizes
    },
    **{m.name: m for m in _TPU_VMS},
}
"""Every machine type the library knows, by name."""


def machine(name: str) -> Machine | None:
    """The machine type ``name``, or None if the table does not know it."""
    return MACHINES.get(name)


def fitting_cpu_machines(cpu: float, memory_bytes: float) -> list[str]:
    """General-purpose machine types whose empty node holds a pod of this size, cheapest shapes first."""
    return sorted(
        (m.name for m in MACHINES.values() if not m.name.startswith("ct") and m.fits(cpu, memory_bytes)),
        key=lambda n: (MACHINES[n].vcpus, MACHINES[n].memory_gib),
    )


_MACHINE_TYPE = re.compile(r"^[a-z][a-z0-9]*-([a-z]+)-[0-9]+(-[a-z]+)?$")
"""A predefined machine type, ``<family>-<type>-<vCPUs>`` with an optional suffix (``c3-standard-8-lssd``,
``c3-highcpu-192-metal``); https://cloud.google.com/compute/docs/machine-resource#machine_type_terminology."""
_CUSTOM = re.compile(r"^([a-z][a-z0-9]*-)?custom-[0-9]+-[0-9]+(-ext)?$")
"""A custom machine type, ``[<family>-]custom-<vCPUs>-<MiB>[-ext]``
(https://cloud.google.com/compute/docs/instances/creating-instance-with-custom-machine-type#gcloud)."""
SHARED_CORE = ("e2-micro", "e2-small", "e2-medium", "f1-micro", "g1-small")
"""Shared-core machine types, named without a vCPU count
(https://cloud.google.com/compute/docs/general-purpose-machines#sharedcore)."""
MACHINE_TYPE_WORDS = frozenset(
    {"standard", "highmem", "highcpu", "megamem", "ultramem", "hypermem", "highgpu", "megagpu", "ultragpu"}
    | {"edgegpu", "hightpu"}
)
"""The ``<type>`` of a predefined machine type, across Compute Engine's families
(https://cloud.google.com/compute/docs/machine-resource#machine_type_terminology; the accelerator-optimized
families' gpu types, https://cloud.google.com/compute/docs/accelerator-optimized-machines; TPU VMs' hightpu)."""


def machine_type_problem(name: str) -> str:
    """Why ``name`` is no Compute Engine machine type, or ``""``. A family the catalog does not hold is allowed (its
    nodes are priced with ``prices.vcpuHour``) when the name follows the grammar (:data:`_MACHINE_TYPE`,
    :data:`_CUSTOM`, :data:`SHARED_CORE`) with a known type (:data:`MACHINE_TYPE_WORDS`); a name of a catalog family
    with a vCPU count it does not offer, or with a misspelt type, is refused with the close names the catalog knows."""
    if name in MACHINES or name in SHARED_CORE or _CUSTOM.match(name):
        return ""
    close = difflib.get_close_matches(name, [*MACHINES, *SHARED_CORE], n=3, cutoff=0.8)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    m = _MACHINE_TYPE.match(name)
    if not m:
        return (
            "unknown machine type, not a Compute Engine machine type name: valid are <family>-<type>-<vCPUs> "
            "(e.g. n2-standard-8), "
            f"<family>-custom-<vCPUs>-<MiB> or a shared-core type ({', '.join(SHARED_CORE)}){hint}"
        )
    family_type = name.rsplit("-", 1)[0] if m.group(2) is None else name.rsplit("-", 2)[0]
    if family_type in _FAMILIES:
        sizes = ", ".join(str(n) for n in _FAMILIES[family_type][1])
        return f"{family_type} offers {sizes} vCPUs, not {name.removeprefix(family_type + '-')}{hint}"
    if m.group(1) not in MACHINE_TYPE_WORDS:
        return (
            f"{m.group(1)!r} is no Compute Engine machine type; valid types: "
            f"{', '.join(sorted(MACHINE_TYPE_WORDS))} (a family the catalog lacks is accepted, priced by "
            f"prices.vcpuHour){hint}"
        )
    return ""
