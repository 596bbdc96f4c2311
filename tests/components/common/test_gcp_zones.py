"""tpu_serving.common.gcp_zones: the regions' zones, and the zones a CPU pool spans."""

from __future__ import annotations

from tpu_serving.common import gcp_zones, naming


def test_gcp_zones_zones_table_names_regions_and_zones_of_the_form():
    assert len(gcp_zones.REGION_ZONES) >= 40
    for region, zones in gcp_zones.REGION_ZONES.items():
        assert not naming.region_problem(region), region
        assert len(zones) >= 3 and len(set(zones)) == len(zones), region
        for zone in zones:
            assert naming.ZONE.match(zone) and naming.ZONE.match(zone).group(1) == region, zone
    # every zone the TPU zone table lists of the form <region>-<letter> is a zone of the table
    from tpu_serving.catalog import tpu_zones

    for zones in tpu_zones.TPU_ZONES.values():
        for zone in zones:
            if naming.ZONE.match(zone):
                assert zone in gcp_zones.REGION_ZONES[tpu_zones.region_of(zone)], zone


def test_gcp_zones_pool_zones_spans_the_region_the_stacks_zone_first():
    assert gcp_zones.pool_zones("us-east5", "us-east5-b") == ("us-east5-b", "us-east5-a", "us-east5-c")
    assert gcp_zones.pool_zones("us-west4", "us-west4-a", ("us-west4-c", "us-west4-a")) == ("us-west4-c", "us-west4-a")
    # a region the table does not hold: its zones are not known, so none is guessed
    assert gcp_zones.pool_zones("xx-new1", "xx-new1-a") == ("xx-new1-a",)


def test_per_zone_minimum_keeps_two_nodes_in_all_unless_set():
    from tpu_serving.common.gcp_zones import per_zone_minimum

    assert [per_zone_minimum(None, z) for z in (1, 2, 3)] == [2, 1, 1]
    assert [per_zone_minimum(3, z) for z in (1, 3)] == [3, 3]
    assert per_zone_minimum(0, 2) == 0
