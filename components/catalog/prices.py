"""List prices the cost estimate starts from, each with its source and date, and the stack's overrides.

Pure data. Prices are USD list prices; a region's price can differ, and negotiated rates
(committed use discounts, private offers) are set with the stack's ``prices`` overrides
(:class:`PriceOverrides`). Where no figure was found, the entry says so: either it falls back
to another figure as an upper bound (its ``note`` says which), or it has no price
(``usd is None``) and the estimate lists it as unpriced until an override gives one.

How the figures were obtained (looked up 2026-11-22, from stored copies of public pages;
Google's own pricing pages were not readable there, so each figure names the page it comes
from and the public material that quotes it):

- TPU on-demand per chip-hour, v5e $1.20 and v5p $4.20: Google Cloud TPU pricing
  (https://cloud.google.com/tpu/pricing) "as of February 2025", as quoted by *How to Scale
  Your Model* (jax-ml/scaling-book, ``inference.md``, https://jax-ml.github.io/scaling-book/inference/).
- TPU v6e (Trillium) on-demand $2.70 per chip-hour in US regions: the same Google page as
  quoted by public TPU projects' price tables (2025-2026); not read on Google's page itself.
- TPU v6e flex-start $1.35 per chip-hour (europe-west4, us-east1, us-east5, asia-northeast1):
  Dynamic Workload Scheduler pricing (https://cloud.google.com/products/dws/pricing), as quoted
  by a public v6e serving report (2026).
- N2 and E2 per vCPU-hour and GiB-hour (us-central1 on-demand): VM instance pricing
  (https://cloud.google.com/compute/vm-instance-pricing), as carried by several public
  cost tools (N2 $0.031611 / $0.004237, E2 $0.021811 / $0.002923; they reproduce the
  published n2-standard-8 and e2-standard-8 hourly prices).
- Balanced persistent disk $0.10 per GB-month (https://cloud.google.com/compute/disks-image-pricing),
  Cloud Storage Standard $0.020 per GB-month (https://cloud.google.com/storage/pricing),
  us-central1, as carried by the same tools.
- GKE cluster management fee $0.10 per cluster-hour
  (https://cloud.google.com/kubernetes-engine/pricing); the free tier's monthly credit
  (one zonal or Autopilot cluster) does not cover a regional Standard cluster.

TPU chip prices include the TPU VM's host vCPUs and memory (Cloud TPU bills per chip-hour).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..common.settings import described
from . import GENERATIONS
from .capacity import Capacity

HOURS_PER_MONTH = 730
"""Hours in the average month, as Google Cloud's pricing calculator counts them."""

LOOKED_UP = "2026-11-22"


@dataclass(frozen=True)
class Price:
    """One list price: its figure (None: none was found), its unit, where it comes from and when."""

    usd: float | None
    unit: str
    source: str
    as_of: str
    note: str = ""


_TPU_PAGE = "https://cloud.google.com/tpu/pricing"
_DWS_PAGE = "https://cloud.google.com/products/dws/pricing"
_RESERVED = (
    "a reservation is billed at the on-demand rate unless a committed use discount applies "
    "(https://cloud.google.com/tpu/docs/consumption-options); set prices.tpuChipHour for the negotiated rate"
)
_NO_SPOT = "no spot figure found; the on-demand price is used as an upper bound"
_NO_FLEX = "no flex-start figure found for this generation; the on-demand price is used as an upper bound"

_ON_DEMAND = {
    "v5e": Price(1.20, "chip-hour", _TPU_PAGE + " (quoted by jax-ml/scaling-book inference.md)", "2025-02"),
    "v5p": Price(4.20, "chip-hour", _TPU_PAGE + " (quoted by jax-ml/scaling-book inference.md)", "2025-02"),
    "v6e": Price(2.70, "chip-hour", _TPU_PAGE + " (US regions, quoted by public TPU price tables)", LOOKED_UP),
    "tpu7x": Price(
        None, "chip-hour", _TPU_PAGE, LOOKED_UP, "no TPU7x (Ironwood) list price found; set prices.tpuChipHour"
    ),
}


def _tpu_prices() -> dict[tuple[str, Capacity], Price]:
    table: dict[tuple[str, Capacity], Price] = {}
    for gen, on_demand in _ON_DEMAND.items():
        table[(gen, Capacity.ON_DEMAND)] = on_demand
        table[(gen, Capacity.SPOT)] = Price(on_demand.usd, "chip-hour", on_demand.source, on_demand.as_of, _NO_SPOT)
        for reserved in (Capacity.RESERVATION, Capacity.ANY_RESERVATION):
            table[(gen, reserved)] = Price(on_demand.usd, "chip-hour", on_demand.source, on_demand.as_of, _RESERVED)
        table[(gen, Capacity.FLEX_START)] = Price(
            on_demand.usd, "chip-hour", on_demand.source, on_demand.as_of, _NO_FLEX
        )
    table[("v6e", Capacity.FLEX_START)] = Price(
        1.35, "chip-hour", _DWS_PAGE + " (quoted by a public v6e report)", LOOKED_UP
    )
    return table


TPU_CHIP_HOUR: dict[tuple[str, Capacity], Price] = _tpu_prices()
"""USD per TPU chip-hour by (generation, capacity type)."""

_VM_PAGE = "https://cloud.google.com/compute/vm-instance-pricing (us-central1, quoted by public cost tools)"
VCPU_HOUR: dict[str, Price] = {
    "n2": Price(0.031611, "vCPU-hour", _VM_PAGE, LOOKED_UP),
    "e2": Price(0.021811, "vCPU-hour", _VM_PAGE, LOOKED_UP),
}
"""USD per vCPU-hour of on-demand CPU nodes, by machine family."""
MEMORY_GIB_HOUR: dict[str, Price] = {
    "n2": Price(0.004237, "GiB-hour", _VM_PAGE, LOOKED_UP),
    "e2": Price(0.002923, "GiB-hour", _VM_PAGE, LOOKED_UP),
}
"""USD per GiB-hour of memory of on-demand CPU nodes, by machine family."""

BOOT_DISK = "pd-balanced"
"""GKE's default boot disk type, which every node pool of the stack uses."""
STORAGE_GIB_MONTH: dict[str, Price] = {
    BOOT_DISK: Price(
        0.10,
        "GB-month",
        "https://cloud.google.com/compute/disks-image-pricing (us-central1, quoted by public cost tools)",
        LOOKED_UP,
    ),
    "STANDARD": Price(
        0.020,
        "GB-month",
        "https://cloud.google.com/storage/pricing (us-central1, quoted by public cost tools)",
        LOOKED_UP,
    ),
    "NEARLINE": Price(None, "GB-month", "https://cloud.google.com/storage/pricing", LOOKED_UP, "no figure found"),
    "COLDLINE": Price(None, "GB-month", "https://cloud.google.com/storage/pricing", LOOKED_UP, "no figure found"),
    "ARCHIVE": Price(None, "GB-month", "https://cloud.google.com/storage/pricing", LOOKED_UP, "no figure found"),
}
"""USD per GB-month of stored data: boot disks and Cloud Storage classes."""

GKE_CLUSTER_HOUR = Price(0.10, "cluster-hour", "https://cloud.google.com/kubernetes-engine/pricing", LOOKED_UP)
"""The GKE Standard cluster management fee."""


def tpu_key(generation: str, capacity: Capacity | None = None) -> str:
    """The override key of a TPU price: ``v6e`` (every capacity type) or ``v6e/spot``."""
    return generation if capacity is None else f"{generation}/{capacity}"


def _tpu_keys() -> tuple[str, ...]:
    return tuple(tpu_key(g.name, c) for g in GENERATIONS for c in (None, *Capacity))


def _unknown(kind: str, given: Mapping[str, float], known: tuple[str, ...]) -> list[str]:
    bad = [k for k in given if k not in known]
    negative = [k for k, v in given.items() if isinstance(v, (int, float)) and v < 0]
    found = [f"{kind}: unknown key(s) {', '.join(bad)}; valid: {', '.join(known)}"] if bad else []
    found += [f"{kind}[{k}] = {given[k]}: a price must not be negative" for k in negative]
    return found


@dataclass(frozen=True)
class PriceOverrides:
    """Negotiated prices that replace list prices in the cost estimate (USD)."""

    tpu_chip_hour: Mapping[str, float] = described(
        "USD per TPU chip-hour by generation (`v6e`) or generation and capacity type (`v6e/spot`); "
        "the more specific key wins.",
        default_factory=dict,
    )
    vcpu_hour: Mapping[str, float] = described(
        "USD per vCPU-hour of CPU nodes by machine family (`n2`, `e2`).", default_factory=dict
    )
    memory_gib_hour: Mapping[str, float] = described(
        "USD per GiB-hour of CPU node memory by machine family (`n2`, `e2`).", default_factory=dict
    )
    storage_gb_month: Mapping[str, float] = described(
        "USD per GB-month by storage kind (`pd-balanced` boot disks, `STANDARD` and the other bucket classes).",
        default_factory=dict,
    )

    def problems(self) -> list[str]:
        """Unknown keys (with the valid ones) and negative prices."""
        return (
            _unknown("tpu_chip_hour", self.tpu_chip_hour, _tpu_keys())
            + _unknown("vcpu_hour", self.vcpu_hour, tuple(VCPU_HOUR))
            + _unknown("memory_gib_hour", self.memory_gib_hour, tuple(MEMORY_GIB_HOUR))
            + _unknown("storage_gb_month", self.storage_gb_month, tuple(STORAGE_GIB_MONTH))
        )


def overridden(price: Price, *keys: str, overrides: Mapping[str, float]) -> Price:
    """``price``, or the override of the first of ``keys`` that has one (marked as negotiated)."""
    for key in keys:
        if key in overrides:
            return Price(float(overrides[key]), price.unit, f"stack setting prices ({key})", "negotiated")
    return price
