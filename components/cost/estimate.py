"""The cost estimate of a deployment: pure arithmetic over what it runs and the price table.

Per hour and per month (730 hours), split into TPU, CPU, storage and the GKE cluster fee.
What is counted, and how:

- TPU: the chips of the slices that keep their VMs at the chip-hour price of their generation
  and capacity type; slices whose pools start empty and scale from zero (flex-start, and an
  autoscaled workload's slices above its minimum) cost nothing while empty and count only in
  the peak figure, every slice running; but a slice a specific reservation holds bills its chips empty or not (the
  reservation does);
- CPU: the CPU pool at its autoscaling minimum, each node's vCPUs and memory at its
  machine family's prices; a backend's own CPU nodes that scale from zero (a batch PathwaysJob's
  head) count only in the peak figure;
- storage: every node's boot disk (``pd-balanced``) and every bucket's expected size at
  its storage class, as an estimate;
- the GKE Standard cluster management fee.

A figure with no price is listed as unpriced, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..catalog import SliceShape, machines
from ..catalog.capacity import Capacity
from ..catalog.prices import (
    BOOT_DISK,
    GKE_CLUSTER_HOUR,
    HOURS_PER_MONTH,
    MEMORY_GIB_HOUR,
    STORAGE_GIB_MONTH,
    TPU_CHIP_HOUR,
    VCPU_HOUR,
    Price,
    PriceOverrides,
    overridden,
    tpu_key,
)

Part = Literal["tpu", "cpu", "storage", "cluster"]
PARTS: tuple[Part, ...] = ("tpu", "cpu", "storage", "cluster")


@dataclass(frozen=True)
class SliceUsage:
    """``count`` identical TPU slices of one kind."""

    name: str
    shape: SliceShape
    count: int
    capacity: Capacity
    disk_size_gb: int
    running: int | None = None
    """How many of the ``count`` keep their VMs (the others start empty and scale from zero); None: all."""

    @property
    def always_on(self) -> int:
        """Slices that run (and bill) without demand."""
        return self.count if self.running is None else self.running

    @property
    def chips_billed(self) -> int:
        """Slices whose chips bill without demand: those that run, and every slice a specific reservation holds, empty
        or not ("You're charged for the reserved resources at the same on-demand rate as running VMs ... until the
        reservation is deleted. A VM consuming a reservation doesn't incur separate charges": Google Cloud, "Use
        reservations with inference", which points to Compute Engine's reservations overview, reservation billing)."""
        return self.count if self.capacity is Capacity.RESERVATION else self.always_on


@dataclass(frozen=True)
class NodeUsage:
    """CPU nodes of one pool, as many as are counted (the pool's minimum)."""

    name: str
    machine_type: str
    nodes: int
    disk_size_gb: int
    running: int | None = None
    """How many of the ``nodes`` run without demand (the others start empty and scale from zero); None: all."""

    @property
    def always_on(self) -> int:
        """Nodes that run (and bill) without demand."""
        return self.nodes if self.running is None else min(self.running, self.nodes)


def pool_minimum(name: str, machine_type: str, each: int, disk_size_gb: int, zones: Sequence[str]) -> list[NodeUsage]:
    """A CPU pool at its minimum, ``each`` nodes in each of its ``zones``: its first zone's nodes, then the nodes its
    other zones add (their own line, so the estimate shows what surviving a zone costs)."""
    first = NodeUsage(f"{name} (minimum)", machine_type, each, disk_size_gb)
    if len(zones) <= 1:
        return [first]
    more = f"{name} (minimum, {len(zones) - 1} more zone{'s' if len(zones) > 2 else ''}: {', '.join(zones[1:])})"
    return [first, NodeUsage(more, machine_type, each * (len(zones) - 1), disk_size_gb)]


@dataclass(frozen=True)
class BucketUsage:
    """A bucket's expected size, in GB, and its storage class."""

    name: str
    storage_class: str
    size_gb: float


@dataclass(frozen=True)
class Line:
    """One priced item: its part, what it is, its cost per hour (None: unpriced) and how it was priced."""

    part: Part
    what: str
    usd_per_hour: float | None
    basis: str
    peak_usd_per_hour: float | None = None
    """With every slice running, when that costs more than ``usd_per_hour`` (slices that scale from zero)."""


@dataclass(frozen=True)
class CostEstimate:
    """The priced items of a deployment and their sums."""

    lines: tuple[Line, ...]

    def per_hour(self, part: Part | None = None, *, peak: bool = False) -> float:
        """USD per hour of ``part`` (every part when None), unpriced items left out; ``peak``: every slice running."""
        return sum(
            ((x.peak_usd_per_hour if peak and x.peak_usd_per_hour is not None else x.usd_per_hour) or 0.0)
            for x in self.lines
            if part is None or x.part == part
        )

    def per_month(self, part: Part | None = None) -> float:
        """USD per month (730 hours) of ``part``."""
        return self.per_hour(part) * HOURS_PER_MONTH

    @property
    def unpriced(self) -> tuple[Line, ...]:
        """Items with no price: the sums leave them out."""
        return tuple(x for x in self.lines if x.usd_per_hour is None)


def _basis(price: Price, quantity: float, unit: str) -> str:
    figure = "no price" if price.usd is None else f"${price.usd:g}/{price.unit}"
    note = f"; {price.note}" if price.note else ""
    return f"{quantity:g} {unit} x {figure} ({price.source}, {price.as_of}{note})"


def _times(price: Price, quantity: float, per_month: bool = False) -> float | None:
    if price.usd is None:
        return None
    return price.usd * quantity / (HOURS_PER_MONTH if per_month else 1)


def chip_hour(generation: str, capacity: Capacity, overrides: PriceOverrides) -> Price:
    """The chip-hour price of ``generation`` on ``capacity``: the stack's override for the two, else for the
    generation, else the list price."""
    return overridden(
        TPU_CHIP_HOUR[(generation, capacity)],
        tpu_key(generation, capacity),
        tpu_key(generation),
        overrides=overrides.tpu_chip_hour,
    )


def tpu_lines(slices: Sequence[SliceUsage], overrides: PriceOverrides) -> list[Line]:
    """Each slice kind's chips at its generation's and capacity type's chip-hour price."""
    lines = []
    for s in slices:
        price = chip_hour(s.shape.generation.name, s.capacity, overrides)
        chips, all_chips = s.chips_billed * s.shape.chips, s.count * s.shape.chips
        what = f"{s.name}: {s.count} x {s.shape.slice_name} {s.capacity}"
        peak = None
        if s.chips_billed < s.count:
            what += f" ({s.count - s.always_on} from zero)"
            peak = _times(price, all_chips)
        elif s.always_on < s.count:
            what += f" ({s.count - s.always_on} from zero, billed by the reservation while empty)"
        lines.append(Line("tpu", what, _times(price, chips), _basis(price, chips, "chips"), peak))
    return lines


def _node_hour(vcpu: Price, memory: Price, machine: machines.Machine, count: int) -> float | None:
    """``count`` nodes of ``machine``: its vCPUs and memory at their prices (None: unpriced)."""
    cpu_cost, memory_cost = _times(vcpu, count * machine.vcpus), _times(memory, count * machine.memory_gib)
    return None if cpu_cost is None or memory_cost is None else cpu_cost + memory_cost


def cpu_lines(nodes: Sequence[NodeUsage], overrides: PriceOverrides) -> list[Line]:
    """Each CPU pool's counted nodes at their family's vCPU-hour and GiB-hour prices."""
    lines = []
    for n in nodes:
        machine = machines.machine(n.machine_type)
        family = n.machine_type.split("-")[0]
        what = f"{n.name}: {n.nodes} x {n.machine_type}" + (
            f" ({n.nodes - n.always_on} from zero)" if n.always_on < n.nodes else ""
        )
        vcpu = VCPU_HOUR.get(family)
        memory = MEMORY_GIB_HOUR.get(family)
        if machine is None or vcpu is None or memory is None:
            lines.append(Line("cpu", what, None, f"no price for machine type {n.machine_type!r}; set prices.vcpuHour"))
            continue
        vcpu = overridden(vcpu, family, overrides=overrides.vcpu_hour)
        memory = overridden(memory, family, overrides=overrides.memory_gib_hour)
        vcpus, gib = n.always_on * machine.vcpus, n.always_on * machine.memory_gib
        peak = _node_hour(vcpu, memory, machine, n.nodes) if n.always_on < n.nodes else None
        basis = f"{_basis(vcpu, vcpus, 'vCPUs')} + {_basis(memory, gib, 'GiB')}"
        lines.append(Line("cpu", what, _node_hour(vcpu, memory, machine, n.always_on), basis, peak))
    return lines


def storage_lines(
    slices: Sequence[SliceUsage], nodes: Sequence[NodeUsage], buckets: Sequence[BucketUsage], overrides: PriceOverrides
) -> list[Line]:
    """Boot disks of every counted node and running TPU VM, and the buckets' expected sizes."""
    disk = overridden(STORAGE_GIB_MONTH[BOOT_DISK], BOOT_DISK, overrides=overrides.storage_gb_month)
    gb = sum(s.always_on * s.shape.vms * s.disk_size_gb for s in slices) + sum(
        n.always_on * n.disk_size_gb for n in nodes
    )
    all_gb = sum(s.count * s.shape.vms * s.disk_size_gb for s in slices) + sum(n.nodes * n.disk_size_gb for n in nodes)
    peak = _times(disk, all_gb, per_month=True) if all_gb > gb else None
    lines = [
        Line("storage", f"boot disks ({BOOT_DISK})", _times(disk, gb, per_month=True), _basis(disk, gb, "GB"), peak)
    ]
    for b in buckets:
        price = overridden(
            STORAGE_GIB_MONTH.get(b.storage_class, Price(None, "GB-month", "none", "")),
            b.storage_class,
            overrides=overrides.storage_gb_month,
        )
        what = f"bucket {b.name} ({b.storage_class})"
        lines.append(Line("storage", what, _times(price, b.size_gb, per_month=True), _basis(price, b.size_gb, "GB")))
    return lines


def estimate(
    slices: Sequence[SliceUsage],
    nodes: Sequence[NodeUsage],
    buckets: Sequence[BucketUsage],
    overrides: PriceOverrides | None = None,
    cluster_fee: bool = True,
) -> CostEstimate:
    """The cost of running ``slices``, ``nodes`` and ``buckets`` in one GKE Standard cluster (and its management fee,
    unless ``cluster_fee`` is false: an existing cluster's, which its owner pays)."""
    overrides = overrides or PriceOverrides()
    fee = GKE_CLUSTER_HOUR
    return CostEstimate(
        tuple(
            tpu_lines(slices, overrides)
            + cpu_lines(nodes, overrides)
            + storage_lines(slices, nodes, buckets, overrides)
            + (
                [Line("cluster", "GKE cluster management fee", fee.usd, _basis(fee, 1, "cluster"))]
                if cluster_fee
                else []
            )
        )
    )
