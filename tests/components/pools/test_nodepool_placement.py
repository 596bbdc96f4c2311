"""How a TPU slice's node pool is placed: no policy on one VM, COMPACT with the topology on several, and on TPU7x a
workload policy (HIGH_THROUGHPUT, carrying the topology) the component creates and names in the pool."""

from __future__ import annotations

import pytest

from tests.fixtures.pools import SA, pool_args
from tests.test_library_mocks import ProviderMocks, run, set_mocks
from tpu_serving import TpuNodePool, catalog
from tpu_serving.common.validation import ArgumentsError
from tpu_serving.pools.nodepool import node_pool_args, placement_policy, pool_ignore_changes, workload_policy_args

TPU7X_16 = catalog.resolve_slice_name("tpu7x-16")
POLICY = "c-tpu7x16-placement"


def test_placement_policy_of_each_kind_of_slice():
    assert placement_policy(catalog.slice_shape("tpu7x-standard-4t", "2x2x1"), None) is None
    assert placement_policy(catalog.slice_shape("ct6e-standard-4t", "4x4"), None) == {
        "type": "COMPACT",
        "tpu_topology": "4x4",
    }
    # GKE stores a workload-policy pool's policyName and tpuTopology with no type (vllm-project/ci-infra PR 547)
    assert placement_policy(TPU7X_16, POLICY) == {"type": "", "policy_name": POLICY, "tpu_topology": "2x2x2"}


def test_node_pool_args_of_a_multi_host_tpu7x_slice_name_its_workload_policy():
    args = node_pool_args(pool_args(shape=TPU7X_16, workload_policy_name=POLICY), "c-a", SA, POLICY)
    assert args.placement_policy == {"type": "", "policy_name": POLICY, "tpu_topology": "2x2x2"}
    assert args.node_count == 2 and args.node_config["machine_type"] == "tpu7x-standard-4t"


def test_workload_policy_args_are_regional_high_throughput_with_the_slice_topology():
    args = workload_policy_args(pool_args(shape=TPU7X_16, workload_policy_name=POLICY, pool_names=("c-a", "c-b")))
    assert (args.name, args.project, args.region) == (POLICY, "p-123456", "us-east5")
    assert (args.workload_policy.type, args.workload_policy.accelerator_topology) == ("HIGH_THROUGHPUT", "2x2x2")


@pytest.mark.parametrize("name", [None, "Bad_Name", "a" * 64])
def test_tpu_node_pool_args_refuse_a_tpu7x_slice_without_a_valid_policy_name(name):
    set_mocks(preview=True)
    with pytest.raises(ArgumentsError, match="workload_policy_name"):
        run(lambda: TpuNodePool("c", pool_args(shape=TPU7X_16, workload_policy_name=name)))


def test_tpu_node_pool_creates_one_workload_policy_for_its_tpu7x_pools():
    mocks: ProviderMocks = set_mocks(preview=False)
    run(lambda: TpuNodePool("c", pool_args(shape=TPU7X_16, workload_policy_name=POLICY, pool_names=("c-a", "c-b"))))
    (policy,) = mocks.inputs("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "2x2x2"}
    pools = mocks.inputs("gcp:container/nodePool:NodePool")
    assert [p["placementPolicy"] for p in pools] == [{"policyName": POLICY, "tpuTopology": "2x2x2", "type": ""}] * 2
    assert policy["description"] == f"Places tpu-serving's TPU slices of {TPU7X_16.describe()}"  # not the pools' names


def test_pool_ignore_changes_leaves_a_workload_policy_pools_placement_type_to_gke():
    tpu7x = pool_args(shape=TPU7X_16, workload_policy_name=POLICY, pool_names=("c-a", "c-b"), scale_to_zero=("c-b",))
    assert pool_ignore_changes(tpu7x, "c-a") == ["placementPolicy.type"]
    assert pool_ignore_changes(tpu7x, "c-b") == ["node_count", "placementPolicy.type"]
    assert pool_ignore_changes(pool_args(), "c-a") is None


def test_tpu_node_pool_creates_no_workload_policy_for_other_slices():
    mocks: ProviderMocks = set_mocks(preview=False)
    run(lambda: TpuNodePool("c", pool_args()))
    assert mocks.inputs("gcp:compute/resourcePolicy:ResourcePolicy") == []
    assert len(mocks.inputs("gcp:container/nodePool:NodePool")) == 1
