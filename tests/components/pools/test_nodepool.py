"""tpu_serving.pools.nodepool: TpuNodePool and its builder, one GKE node pool per TPU slice, and its arguments."""

from __future__ import annotations

import pytest

from tests.components.platform.test_cluster import cluster_args_for_test
from tests.fixtures.components import run
from tests.fixtures.pools import SA, pool_args
from tpu_serving import TpuCluster, TpuNodePool, catalog
from tpu_serving.common.validation import argument_problems
from tpu_serving.pools.nodepool import node_pool_args


def test_nodepool_builder_multi_host_is_compact_with_topology():
    args = node_pool_args(pool_args(), "c-a", SA)
    assert args.node_count == 4
    assert args.placement_policy == {"type": "COMPACT", "tpu_topology": "4x4"}
    assert args.node_locations == ["us-east5-b"]


def test_nodepool_builder_single_host_has_no_placement():
    args = node_pool_args(pool_args(shape=catalog.slice_shape("ct6e-standard-8t", "2x4")), "c-a", SA)
    assert args.node_count == 1 and args.placement_policy is None


def test_nodepool_builder_spot_and_reservation():
    spot = node_pool_args(pool_args(spot=True), "c-a", SA).node_config
    assert spot["spot"] is True and "reservation_affinity" not in spot
    res = node_pool_args(pool_args(reservation="tpu-res"), "c-a", SA).node_config
    assert res["reservation_affinity"] == {
        "consume_reservation_type": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["tpu-res"],
    }


def test_nodepool_component_one_pool_per_slice():
    def program():
        pool = TpuNodePool("tpu", pool_args(pool_names=("c-a-0", "c-a-1", "c-a-2")))
        assert pool.node_selector == {
            "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
            "cloud.google.com/gke-tpu-topology": "4x4",
        }

    plan = run(program)
    (component,) = plan.of_type("tpu-serving:index:TpuNodePool")
    pools = plan.of_type("gcp:container/nodePool:NodePool")
    assert sorted(p.inputs["name"] for p in pools) == ["c-a-0", "c-a-1", "c-a-2"]
    assert all(p.parent == component.urn for p in pools)
    assert all(p.inputs["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"} for p in pools)


def test_nodepool_take_outputs_only_where_wired_and_integral_floats_as_integers():
    from tpu_serving.catalog.capacity import Capacity
    from tpu_serving.common.validation import OUTPUT_REFUSED, check_arguments
    from tpu_serving.pools.nodepool import TpuNodePoolArgs

    def program():
        cluster = TpuCluster("c", cluster_args_for_test())
        assert argument_problems(pool_args(project=cluster.cluster.id, disk_size_gb=200.5, spot=1)) == [
            f"TpuNodePoolArgs.project is a pulumi Output: {OUTPUT_REFUSED}",
            "TpuNodePoolArgs.spot = 1: must be true or false",
            "TpuNodePoolArgs.disk_size_gb = 200.5: must be an integer",
        ]
        # The component provider sends numbers as floats, choices as their values and nested arguments as mappings.
        args = check_arguments("TpuNodePool", pool_args(disk_size_gb=300.0, capacity="spot"), TpuNodePoolArgs)
        assert args.disk_size_gb == 300 and isinstance(args.disk_size_gb, int) and args.capacity is Capacity.SPOT

    run(program)


def test_nodepool_builder_image_cache_disk_is_a_container_image_secondary_boot_disk():
    plain = node_pool_args(pool_args(), "c-a", SA).node_config
    assert "secondary_boot_disks" not in plain
    cfg = node_pool_args(pool_args(image_cache_disk="global/images/vllm-tpu-v0-21-0"), "c-a", SA).node_config
    assert cfg["secondary_boot_disks"] == [
        {"disk_image": "global/images/vllm-tpu-v0-21-0", "mode": "CONTAINER_IMAGE_CACHE"}
    ]
    assert cfg["gcfs_config"] == {"enabled": True}


def test_nodepool_component_refuses_an_image_cache_disk_without_image_streaming():
    from tpu_serving.common.validation import ArgumentsError

    with pytest.raises(ArgumentsError) as err:
        TpuNodePool("tpu", pool_args(image_cache_disk="global/images/cache", image_streaming=False))
    assert "image_cache_disk" in str(err.value) and "image_streaming" in str(err.value)
    with pytest.raises(ArgumentsError) as err:
        TpuNodePool("tpu", pool_args(image_cache_disk="cache"))
    assert "image_cache_disk" in str(err.value)
