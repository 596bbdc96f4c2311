"""Which zones each GCP region has: the table a stack's ``zone`` (and a slice's) is checked against.

A zone is ``<region>-<letter>``, but not every letter is a zone: ``us-west4`` has ``a``, ``b`` and ``c``, so
``us-west4-z`` names nothing, and GKE refuses a node pool there only at ``pulumi up``, after the regional cluster
is built. The table below lets the stack file's check refuse it first, naming the zones of the region.

Source: Compute Engine, "Regions and zones", https://cloud.google.com/compute/docs/regions-zones ("Available
regions and zones"), read 2026-11-29 from stored copies of it: its text gives ``us-central1``'s zones as
``a``, ``b``, ``c``, ``f`` and ``us-west1``'s as ``a``, ``b``, ``c``, and an older copy's table of regions
("Region / Zones / Location") gives ``europe-west1`` ``b``, ``c``, ``d`` and the other regions of its time
``a``, ``b``, ``c``. The stored copies are partial (the table of the newest copy could not be read whole), so
the whole list below was checked region by region against a public list generated from
``gcloud compute regions list`` (the Compute Engine API's ``regions.list``, whose ``zones`` field lists each
region's zones), which agrees with every row the page's copies show. ``us-east1`` has ``b``, ``c``, ``d``
(no ``a``), as the TPU page's ``us-east1-d`` for v6e (:mod:`tpu_serving.catalog.tpu_zones`) agrees.

AI zones (``us-central1-ai1a``: https://docs.cloud.google.com/tpu/docs/regions-zones) are not listed: a stack's
``zone`` takes only ``<region>-<letter>`` (:data:`tpu_serving.common.naming.ZONE`). A region the table does not hold
(one opened after it was read) is checked for the zone's form alone, so a new region is never refused here.
"""

from __future__ import annotations

SOURCE = "https://cloud.google.com/compute/docs/regions-zones"
"""The page the table is read from."""
READ = "2026-11-29"
"""When it was read."""

_ABC = ("a", "b", "c")

_LETTERS: dict[str, tuple[str, ...]] = {
    # Africa
    "africa-south1": _ABC,
    # Asia Pacific
    "asia-east1": _ABC,
    "asia-east2": _ABC,
    "asia-northeast1": _ABC,
    "asia-northeast2": _ABC,
    "asia-northeast3": _ABC,
    "asia-south1": _ABC,
    "asia-south2": _ABC,
    "asia-southeast1": _ABC,
    "asia-southeast2": _ABC,
    "australia-southeast1": _ABC,
    "australia-southeast2": _ABC,
    # Europe
    "europe-central2": _ABC,
    "europe-north1": _ABC,
    "europe-north2": _ABC,
    "europe-southwest1": _ABC,
    "europe-west1": ("b", "c", "d"),
    "europe-west2": _ABC,
    "europe-west3": _ABC,
    "europe-west4": _ABC,
    "europe-west6": _ABC,
    "europe-west8": _ABC,
    "europe-west9": _ABC,
    "europe-west10": _ABC,
    "europe-west12": _ABC,
    # Middle East
    "me-central1": _ABC,
    "me-central2": _ABC,
    "me-west1": _ABC,
    # North America
    "northamerica-northeast1": _ABC,
    "northamerica-northeast2": _ABC,
    "northamerica-south1": _ABC,
    "us-central1": ("a", "b", "c", "f"),
    "us-east1": ("b", "c", "d"),
    "us-east4": _ABC,
    "us-east5": _ABC,
    "us-south1": _ABC,
    "us-west1": _ABC,
    "us-west2": _ABC,
    "us-west3": _ABC,
    "us-west4": _ABC,
    # South America
    "southamerica-east1": _ABC,
    "southamerica-west1": _ABC,
}

REGION_ZONES: dict[str, tuple[str, ...]] = {
    region: tuple(f"{region}-{letter}" for letter in letters) for region, letters in _LETTERS.items()
}
"""Region -> its zones, as the page lists them."""


def zones_of(region: str) -> tuple[str, ...] | None:
    """The zones of ``region``, or None when the table does not hold the region."""
    return REGION_ZONES.get(region)


def pool_zones(region: str, zone: str, named: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The zones of a regional pool that should outlive one zone: ``named`` when given, else every zone of ``region``
    the table holds, ``zone`` first (the others in the table's order); ``(zone,)`` when the table does not hold the
    region (its zones are not known here, so none is guessed)."""
    if named:
        return tuple(named)
    zones = zones_of(region)
    if zones is None or zone not in zones:
        return (zone,)
    return (zone, *(z for z in zones if z != zone))


def per_zone_minimum(min_nodes: int | None, zones: int) -> int:
    """The nodes the CPU pool keeps in each of its ``zones`` zones: ``min_nodes`` (:attr:`tpu_serving.platform.cluster.CpuPoolArgs.min_nodes`), or,
    unset, two nodes in all (one per zone over two zones or more), the fewest that hold two replicas on different
    nodes."""
    if min_nodes is not None:
        return min_nodes
    return 1 if zones >= 2 else 2
