"""The TPU zone table (tpu_zones) and the preview's note for a slice in a zone it does not list."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, STACKS, plan_of
from tests.fixtures.configs import GOOD, plan_of_config, with_change
from tpu_serving import catalog
from tpu_serving.catalog import tpu_zones
from tpu_serving.common import naming
from tpu_serving_tools.preview.stack import summary, zone_notes

SOURCE = "source: https://docs.cloud.google.com/tpu/docs/regions-zones, read 2026-11-27"


def in_zone(region: str, zone: str, base: dict = GOOD) -> dict:
    return with_change("tpu-serving:zone", zone, with_change("gcp:region", region, base))


def test_tpu_zones_note_names_the_slice_zone_generation_and_the_listed_zones_of_the_region():
    plan = plan_of_config(in_zone("europe-west4", "europe-west4-b"))
    (note,) = zone_notes(plan)
    assert note.startswith(
        "  note: llama405b-v6e16 in europe-west4-b (v6e): the TPU zone table does not list europe-west4-b for v6e; "
        "it lists v6e in europe-west4 at europe-west4-a ("
    )
    assert SOURCE in note and tpu_zones.COVERAGE in note
    assert note in summary(plan).splitlines()


def test_tpu_zones_a_region_the_table_does_not_cover_still_gets_a_note_saying_so():
    # South America's section of the page was not read: the note says the table cannot tell (as the
    # walkthrough, docs/add-your-own-model.md, says of southamerica-east1-c)
    (note,) = zone_notes(plan_of_config(in_zone("southamerica-east1", "southamerica-east1-c")))
    assert note.startswith(
        "  note: llama405b-v6e16 in southamerica-east1-c (v6e): the TPU zone table does not cover "
        "southamerica-east1 for v6e"
    )
    assert SOURCE in note and "check the page before pulumi up" in note
    assert "does not cover europe-west4" in tpu_zones.zone_note("p", "europe-west4-b", "v5e")  # Europe's v5e row
    assert "it lists v5e in us-central1 at us-central1-a" in tpu_zones.zone_note("p", "us-central1-f", "v5e")


def test_tpu_zones_a_listed_zone_of_another_generation_still_gets_the_note():
    # us-west4-a offers v5e, not v6e (per the table): the stack's v6e slice there is noted
    (note,) = zone_notes(plan_of_config(in_zone("us-west4", "us-west4-a")))
    assert "(v6e)" in note and "it lists v6e in us-west4 in no zone" in note


def test_tpu_zones_a_slice_in_its_own_zone_is_read_from_its_node_pool():
    cfg = with_change("tpu-serving:tpuSlices", [{"name": "v6e16", "slice": "v6e-16", "zone": "us-east5-c"}])
    (note,) = zone_notes(plan_of_config(cfg))
    assert "llama405b-v6e16 in us-east5-c (v6e)" in note and "at us-east5-a, us-east5-b" in note


@pytest.mark.parametrize("stack", STACKS)
def test_tpu_zones_no_shipped_stack_is_in_a_zone_the_table_does_not_list(stack):
    plan = plan_of(stack)
    assert zone_notes(plan) == []
    assert "TPU zone table" not in summary(plan)


def test_tpu_zones_table_covers_the_catalog_generations_and_names_zones():
    assert set(tpu_zones.TPU_ZONES) == {g.name for g in catalog.GENERATIONS}
    for zones in tpu_zones.TPU_ZONES.values():
        assert zones and len(set(zones)) == len(zones)
        for zone in zones:
            region = tpu_zones.region_of(zone)
            assert not naming.region_problem(region), zone
            # a zone is <region>-<letter>, or an AI zone <region>-ai<n><letter> (us-central1-ai1a)
            assert not naming.zone_problem(zone, region) or zone.split("-")[-1].startswith("ai"), zone


def test_tpu_zones_listed_zone_gets_no_note():
    assert tpu_zones.zone_note("p", "us-east5-b", "v6e") is None
    assert tpu_zones.zone_note("p", "us-west4-a", "v5e") is None
    assert tpu_zones.zone_note("p", "us-east5-b", "v5e") is not None
    assert tpu_zones.listed_zones("v6e", "us-central1") == ("us-central1-b",)
    assert tpu_zones.region_of("us-central1-ai1a") == "us-central1"


def test_tpu_zones_the_walkthrough_says_what_happens_to_its_examples():
    # docs/add-your-own-model.md: a zone the region lacks is refused; a TPU zone the page does not list is noted

    from tests.fixtures.configs import load
    from tpu_serving.config import ConfigError

    page = (ROOT / "docs" / "add-your-own-model.md").read_text()
    assert "(`us-west4-z`: the\n   region's zones are `us-west4-a`, `-b`, `-c`) is refused" in page
    with pytest.raises(ConfigError):
        load(in_zone("us-west4", "us-west4-z"))
    assert "v6e in `europe-west4-b`, any TPU in `southamerica-east1-c`) is not refused" in page
    for region, zone in (("europe-west4", "europe-west4-b"), ("southamerica-east1", "southamerica-east1-c")):
        (note,) = zone_notes(plan_of_config(in_zone(region, zone)))
        assert f"in {zone} (v6e)" in note


def test_one_zone_only_says_why_v5e_cannot_span_two_zones_and_nothing_where_it_can():
    """GKE review round 56, m2: the v5e stacks were told to spread their slices over two zones, which Cloud TPU does
    not offer in any region for v5e."""
    said = tpu_zones.one_zone_only("v5e", "us-west4-a")
    assert said is not None and said.startswith("Cloud TPU lists v5e in us-west4 only at us-west4-a")
    assert "v6e in us-east5 (us-east5-a, us-east5-b)" in said
    assert "v5e in" not in said.split("two zones", 1)[1]  # no v5e region is offered as a way out
    assert tpu_zones.one_zone_only("v6e", "us-east5-a") is None
    assert tpu_zones.one_zone_only("v6e", "asia-northeast1-b") is None  # a region the table does not cover


def test_the_v5e_stacks_preview_advises_no_second_v5e_zone():
    text = summary(plan_of("vllm-llama33-70b-v5e16"))
    assert "serve from slice kinds of the same shape in two zones" not in text
    assert "tpuSlices[].zone spreads them" not in text
    assert "Cloud TPU lists v5e in us-west4 only at us-west4-a" in text
