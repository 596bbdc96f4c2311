"""Which zones offer each TPU generation of the catalog, as Google's TPU zone page lists them.

A fact table, not a rule: the page changes over time and what could be read of it here is partial, so a zone
missing from it is never refused; the offline preview prints a note for every TPU pool in a zone the table does
not list for its generation (:func:`zone_note`, which says when the table does not cover the region) and the
cloud decides at ``pulumi up``. A zone the region does not have at all is refused by the stack file's check
(:func:`tpu_serving.common.naming.zone_problem`).

Source: Cloud TPU, "TPU regions and zones", https://docs.cloud.google.com/tpu/docs/regions-zones (also as
https://docs.cloud.google.com/tpu/docs/regions-zones.md.txt), read 2026-11-27 from stored copies of it:

- the ``.md.txt`` form: its introduction (AI zones exist: Google Cloud zones set apart for ML accelerator capacity,
  named like ``us-central1-ai1a``) and North America's TPU7x row
  (``us-central1-ai1a``, ``us-central1-c``) and v6e row (``us-central1-b``, ``us-east1-d``, ``us-east5-a``,
  ``us-east5-b``, where the copy read stops);
- its HTML form (https://docs.cloud.google.com/tpu/docs/types-zones): North America whole. TPU7x
  ``us-central1-c``; v6e ``us-central1-b``, ``us-east1-d``, ``us-east5-a``, ``us-east5-b``, ``us-south1-ai1b`` and
  one zone printed ``us-central1-ai1`` (left out here: no zone is named so, and which AI zone it is cannot be told);
  v5p ``us-central1-a``, ``us-east5-a``; v5e ``us-central1-a``, ``us-south1-a``, ``us-west1-c``, ``us-west4-a``;
- an older copy at https://cloud.google.com/tpu/docs/regions-zones: Europe's v6e row, ``europe-west4-a``, where
  that copy stops.

The page's Europe (beyond v6e), Asia Pacific and South America sections could not be read, so a region there
listing nothing here says nothing about the region (the note says so). GKE's "Plan TPUs in GKE" page
(https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus, read the same day) says only that TPUs are
available in specific regions and a cluster must be in one supported for its type; the part read has no table of
its own. AI zones are recorded as the page lists them, though a stack's ``zone`` takes only ``<region>-<letter>``
(``naming.ZONE``).
"""

SOURCE = "https://docs.cloud.google.com/tpu/docs/regions-zones"
"""The page the table is read from."""
READ = "2026-11-27"
"""When it was read."""
COVERAGE = "North America whole; Europe: v6e only; Asia Pacific and South America not read"
"""Which sections of the page the table holds."""

TPU_ZONES: dict[str, tuple[str, ...]] = {
    "tpu7x": ("us-central1-ai1a", "us-central1-c"),
    "v6e": ("us-central1-b", "us-east1-d", "us-east5-a", "us-east5-b", "us-south1-ai1b", "europe-west4-a"),
    "v5p": ("us-central1-a", "us-east5-a"),
    "v5e": ("us-central1-a", "us-south1-a", "us-west1-c", "us-west4-a"),
}
"""TPU generation (``catalog.TpuGeneration.name``) -> the zones the page lists for it."""


def region_of(zone: str) -> str:
    """The region of a zone: ``us-east5`` of ``us-east5-b``, ``us-central1`` of the AI zone ``us-central1-ai1a``."""
    return zone.rsplit("-", 1)[0]


def listed_zones(generation: str, region: str) -> tuple[str, ...]:
    """The zones of ``region`` the table lists for ``generation``."""
    return tuple(z for z in TPU_ZONES.get(generation, ()) if region_of(z) == region)


def two_zone_regions() -> list[str]:
    """``<generation> in <region> (<zones>)`` for each generation and region the table lists in two zones or more."""
    by: dict[tuple[str, str], list[str]] = {}
    for generation, zones in TPU_ZONES.items():
        for z in zones:
            by.setdefault((generation, region_of(z)), []).append(z)
    return [f"{g} in {r} ({', '.join(zs)})" for (g, r), zs in sorted(by.items()) if len(zs) > 1]


def one_zone_only(generation: str, zone: str) -> str | None:
    """Why a stack's serving slices of ``generation`` cannot span two zones of ``zone``'s region, where the table
    lists the generation there in one zone at most (a regional cluster's node pools are in its own region); None
    where it lists two or more, or does not cover the region. GKE review round 56, m2: the advice to spread v5e
    slices over two zones was one no v5e stack could follow."""
    region = region_of(zone)
    listed = listed_zones(generation, region)
    if not covered(generation, region) or len(listed) > 1:
        return None
    where = f"only at {listed[0]}" if listed else "in no zone"
    return (
        f"Cloud TPU lists {generation} in {region} {where} (cloud.google.com/tpu/docs/regions-zones): zone redundancy "
        f"needs slices of a generation and region listed in two zones ({'; '.join(two_zone_regions())}), or a second "
        "stack in another region"
    )


def covered(generation: str, region: str) -> bool:
    """Whether the table holds the page's section for ``region`` and ``generation`` (:data:`COVERAGE`); the note
    says which: a zone missing from a section read is not listed there, one elsewhere is not known here."""
    return region.startswith(("us-", "northamerica-")) or (generation == "v6e" and region.startswith("europe-"))


def zone_note(slices: str, zone: str, generation: str) -> str | None:
    """The preview's note for TPU node pools ``slices`` (their names) of ``generation`` in ``zone``, or None when
    the table lists that zone for the generation. Every other zone gets one, whether or not the table covers its
    region (:func:`covered`), so a zone the page does not list is never passed over in silence. A note, never a
    refusal: the table is partial and may be out of date, and GKE ("Plan TPUs in GKE",
    https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus, "Validate TPU availability": a cluster
    must be in a region supported for its TPU type) refuses the node pool itself at ``pulumi up``."""
    if zone in TPU_ZONES.get(generation, ()):
        return None
    region = region_of(zone)
    if covered(generation, region):
        listed = listed_zones(generation, region)
        where = f"at {', '.join(listed)}" if listed else "in no zone"
        said = f"the TPU zone table does not list {zone} for {generation}; it lists {generation} in {region} {where}"
    else:
        said = (
            f"the TPU zone table does not cover {region} for {generation} (the page's section for it was not "
            "read), so whether it offers it is not known here"
        )
    return (
        f"note: {slices} in {zone} ({generation}): {said} (source: {SOURCE}, read {READ}; {COVERAGE}). GKE "
        f"creates the node pool only in a zone that offers {generation}: check the page before pulumi up"
    )
