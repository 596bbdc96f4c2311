"""Which zones offer each TPU generation of the catalog, as Google's TPU zone page lists them.

A fact table, not a rule: the page changes over time and what could be read of it here is partial, so a zone
missing from it is never refused; the offline preview prints a note (:func:`zone_note`) and the cloud decides at
``pulumi up``.

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


def covered(generation: str, region: str) -> bool:
    """Whether the table holds the page's section for ``region`` and ``generation`` (:data:`COVERAGE`): elsewhere
    a zone it does not list says nothing, so no note is printed."""
    return region.startswith(("us-", "northamerica-")) or (generation == "v6e" and region.startswith("europe-"))


def zone_note(slices: str, zone: str, generation: str) -> str | None:
    """The preview's note for TPU node pools ``slices`` (their names) of ``generation`` in ``zone``, or None when
    the table lists that zone for the generation or does not cover its region. A note, never a refusal: the table
    may be out of date."""
    if zone in TPU_ZONES.get(generation, ()) or not covered(generation, region_of(zone)):
        return None
    region = region_of(zone)
    listed = listed_zones(generation, region)
    where = f"at {', '.join(listed)}" if listed else "in no zone"
    return (
        f"note: {slices} in {zone} ({generation}): the TPU zone table does not list {zone} for {generation}; it "
        f"lists {generation} in {region} {where} (source: {SOURCE}, read {READ}; {COVERAGE}). GKE creates the node "
        f"pool only in a zone that offers {generation}: check the page before pulumi up"
    )
