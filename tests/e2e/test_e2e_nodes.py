"""The e2e harness's pure parts, without binaries: Nodes from a plan's pools, CRDs from GKE's JSON schemas, a
controller's configuration bound to its pod's IP, loopback checks."""

from __future__ import annotations

import pytest

from tests.conftest import CRDS, ROOT
from tpu_serving import catalog
from tpu_serving.catalog import machines
from tpu_serving_tools.e2e import addresses, controllers, crds, kube, nodes
from tpu_serving_tools.e2e.processes import check_loopback

GOLDEN = ROOT / "tests" / "golden"


def test_e2e_nodes_plan_pools_size_each_pool_from_the_catalog():
    pools = {p.name: p for p in nodes.plan_pools(GOLDEN / "vllm-llama33-70b-v5e16.plan.json")}
    assert set(pools) == {"vllm70b-cpu", "vllm70b-v5e16", "vllm70b-v5e16b", "vllm70b-v5e16c", "vllm70b-v5e16s"}
    slice_pool = pools["vllm70b-v5e16"]
    assert (slice_pool.machine_type, slice_pool.topology, slice_pool.initial_nodes) == ("ct5lp-hightpu-4t", "4x4", 4)
    assert slice_pool.shape == catalog.slice_shape("ct5lp-hightpu-4t", "4x4")
    assert (pools["vllm70b-v5e16s"].initial_nodes, pools["vllm70b-v5e16s"].max_nodes) == (0, 4)  # the spare
    assert (pools["vllm70b-v5e16b"].initial_nodes, pools["vllm70b-v5e16b"].max_nodes) == (4, 4)  # kept, autoscaled


def test_e2e_nodes_pool_lowest_is_the_autoscaling_minimum_else_the_fixed_size():
    pools = {p.name: p for p in nodes.plan_pools(GOLDEN / "vllm-llama33-70b-v5e16.plan.json")}
    assert [pools[n].lowest for n in ("vllm70b-v5e16", "vllm70b-v5e16b", "vllm70b-v5e16s")] == [0, 0, 0]
    (fixed,) = [p for p in nodes.plan_pools(GOLDEN / "llama31-405b-v6e16.plan.json") if p.topology == "4x4"]
    assert (fixed.min_nodes, fixed.lowest) == (None, 4)
    assert pools["vllm70b-cpu"].shape is None


def test_e2e_nodes_pool_reserved_reads_a_specific_reservation():
    """The move step's exception (drain.move_one_group): a pool a specific reservation holds keeps its VM, which the
    reservation bills used or not (SRE review round 42, B2: the production example's fixed reserved pools)."""
    pools = {p.name: p for p in nodes.plan_pools(GOLDEN / "vllm-llama33-70b-v6e8.plan.json")}
    tpu = {n: p for n, p in pools.items() if p.machine_type in catalog.MACHINE_TYPES}
    assert set(tpu) == {f"vllm70bv6e-v6e8{k}" for k in "abcs"} and all(p.reserved for p in tpu.values())
    assert not pools["vllm70bv6e-cpu"].reserved
    assert [tpu[f"vllm70bv6e-v6e8{k}"].lowest for k in "abcs"] == [1, 1, 0, 0]
    assert not any(p.reserved for p in nodes.plan_pools(GOLDEN / "vllm-llama33-70b-v5e16.plan.json"))


def test_e2e_nodes_single_host_pool_is_a_tpu_slice_without_a_placement_policy():
    """A single-host pool has no tpuTopology; its nodes were made as CPU nodes (no TPU labels, no google.com/tpu),
    so the production example's groups could not schedule in make e2e."""
    pools = {p.name: p for p in nodes.plan_pools(GOLDEN / "vllm-llama33-70b-v6e8.plan.json")}
    pool = pools["vllm70bv6e-v6e8a"]
    assert pool.topology is None and pool.shape == catalog.slice_shape("ct6e-standard-8t", "2x4")
    assert pools["vllm70bv6e-cpu"].shape is None


def test_e2e_nodes_tpu_node_labels_and_taint():
    pool = nodes.plan_pools(GOLDEN / "saxml-175b-v5e32x2.plan.json")[1]
    node = nodes.node_object(pool, 3, "127.1.7.0/24")
    labels = node["metadata"]["labels"]
    assert labels["cloud.google.com/gke-nodepool"] == "saxml175b-v5e32-0"
    assert labels["cloud.google.com/gke-tpu-accelerator"] == "tpu-v5-lite-podslice"
    assert labels["cloud.google.com/gke-tpu-topology"] == "4x8"
    assert labels["topology.kubernetes.io/zone"] == "us-west4-a"
    assert labels["topology.kubernetes.io/region"] == "us-west4"
    assert labels["kwok.x-k8s.io/node"] == "fake"
    assert node["spec"]["taints"] == [{"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"}]
    assert node["spec"]["podCIDR"] == "127.1.7.0/24"


def test_e2e_nodes_tpu_node_capacity_and_allocatable():
    pool = nodes.plan_pools(GOLDEN / "saxml-175b-v5e32x2.plan.json")[1]
    capacity, allocatable = nodes.resources(pool)
    machine = machines.machine("ct5lp-hightpu-4t")
    assert machine is not None
    assert capacity == {"cpu": "112", "memory": str(192 * 2**30), "pods": "110", "google.com/tpu": "4"}
    assert allocatable["cpu"] == f"{round(machine.allocatable_cpu * 1000)}m"
    assert allocatable["google.com/tpu"] == "4"


def test_e2e_nodes_cpu_pool_has_no_tpu_label_nor_taint():
    pool = nodes.plan_pools(GOLDEN / "saxml-175b-v5e32x2.plan.json")[0]
    node = nodes.node_object(pool, 0, "127.1.0.0/24")
    assert "cloud.google.com/gke-tpu-accelerator" not in node["metadata"]["labels"]
    assert node["spec"]["taints"] == []
    assert "google.com/tpu" not in nodes.resources(pool)[0]


def test_e2e_nodes_unknown_machine_is_refused():
    pool = nodes.Pool("odd", "z9-weird-8", "us-east5-b")
    with pytest.raises(nodes.NodePoolError, match="does not know z9-weird-8"):
        nodes.resources(pool)


def test_e2e_crds_gke_schema_becomes_a_structural_crd(reference):
    spec = next(s for s in crds.GKE_SCHEMAS if s.kind == "GCPBackendPolicy")
    crd = crds.schema_crd(spec, CRDS)
    assert crd["metadata"]["name"] == "gcpbackendpolicies.networking.gke.io"
    assert crd["spec"]["scope"] == "Namespaced"
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["properties"]["metadata"] == {"type": "object"}

    def has_closed_properties(node: object) -> bool:
        if isinstance(node, dict):
            if "properties" in node and node.get("additionalProperties") is False:
                return True
            return any(has_closed_properties(v) for v in node.values())
        return isinstance(node, list) and any(has_closed_properties(v) for v in node)

    assert not has_closed_properties(schema)


def test_e2e_crds_missing_shared_folder_is_skipped_with_a_message(tmp_path):
    skipped: list[str] = []
    found = crds._shared_files(crds.CONTROLLER_SHARED_FILES, tmp_path, skipped)
    assert found == []
    assert skipped == [f"pathwaysjob-v0.1.4-crd.yaml: {tmp_path / 'pathwaysjob-v0.1.4-crd.yaml'} is missing"]


class _Discovery:
    """A Kube whose discovery serves ``served`` ({"/apis/g/v": [plural, ...]}), 404 for any other path."""

    def __init__(self, served: dict[str, list[str]]):
        self.served = served
        self.asked: list[str] = []

    def request(self, method: str, path: str) -> dict[str, object]:
        self.asked.append(path)
        if path not in self.served:
            raise kube.ApiError(method, path, 404, "404 page not found")
        return {"resources": [{"name": p} for p in self.served[path]]}


def _crd(*versions: tuple[str, bool]) -> dict[str, object]:
    return {
        "metadata": {"name": "leaderworkersets.leaderworkerset.x-k8s.io"},
        "spec": {
            "group": "leaderworkerset.x-k8s.io",
            "names": {"plural": "leaderworkersets"},
            "versions": [{"name": n, "served": s} for n, s in versions],
        },
    }


def test_e2e_crds_discovered_waits_for_every_served_version_to_list_the_plural():
    crd = _crd(("v1", True), ("v1beta1", False))
    assert not crds._discovered(_Discovery({}), crd)  # the group's version not yet served: 404
    listing = _Discovery({"/apis/leaderworkerset.x-k8s.io/v1": ["leaderworkersets/status"]})
    assert not crds._discovered(listing, crd)  # served, but the CRD's plural not yet listed
    ready = _Discovery({"/apis/leaderworkerset.x-k8s.io/v1": ["leaderworkersets", "leaderworkersets/status"]})
    assert crds._discovered(ready, crd)
    assert ready.asked == ["/apis/leaderworkerset.x-k8s.io/v1"]  # a version not served is not asked for
    both = _crd(("v1", True), ("v2", True))
    assert not crds._discovered(ready, both)


def test_e2e_crds_discovered_raises_what_is_not_a_404():
    class Refusing(_Discovery):
        def request(self, method: str, path: str) -> dict[str, object]:
            raise kube.ApiError(method, path, 403, "forbidden")

    with pytest.raises(kube.ApiError, match="403"):
        crds._discovered(Refusing({}), _crd(("v1", True)))


def test_e2e_controllers_configuration_binds_to_the_pod_ip():
    config = {"apiVersion": "config.lws.x-k8s.io/v1alpha1", "kind": "Configuration", "webhook": {"port": 9443}}
    out = controllers.configure(config, "127.1.0.4", {"metrics": 8443, "health": 8081})
    assert out["webhook"] == {"port": 9443, "host": "127.1.0.4"}
    assert out["metrics"] == {"bindAddress": "127.1.0.4:8443"}
    assert out["health"] == {"healthProbeBindAddress": "127.1.0.4:8081"}
    assert controllers.bind_to("127.1.0.4", "0", 8443) == "0"
    assert controllers.bind_to("127.1.0.4", "0.0.0.0:9090", 8443) == "127.1.0.4:9090"


def test_e2e_loopback_only():
    assert check_loopback("127.1.2.3") == "127.1.2.3"
    for address in ("10.0.0.1", "0.0.0.0", "127.1.2", "localhost"):
        with pytest.raises(ValueError, match="not a 127.x loopback address"):
            check_loopback(address)


def test_e2e_address_blocks_are_not_shared(tmp_path):
    first = addresses.claim(tmp_path)
    second = addresses.claim(tmp_path)
    try:
        assert first.block != second.block
        ip, cidr = first.next_node()
        assert (ip, cidr) == (f"127.{first.block}.250.1", "198.18.0.0/24")
        assert first.stand_in("198.18.0.7") == f"127.{first.block}.0.7"
        assert second.stand_in("198.18.0.7") == f"127.{second.block}.0.7"
        assert first.service_cidr == f"127.{first.block}.208.0/20"
        assert first.kubernetes_service_ip == f"127.{first.block}.208.1"
    finally:
        first.release()
        second.release()
    with pytest.raises(ValueError, match="at most 200 kwok Nodes"):
        first.node(200)
    with pytest.raises(ValueError, match="not in 198.18.0.0/16"):
        first.stand_in("127.1.0.7")
