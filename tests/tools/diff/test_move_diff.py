"""tools/diff/move.py: the move of a self-contained stack to a platform stack and a model stack, on small plans."""

from __future__ import annotations

from typing import Any

from tpu_serving_tools.diff.move import engine_names, plan_move, render
from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL

ROOT = "pulumi:pulumi:Stack"
DEPLOYMENT = "tpu-serving:index:TpuServingDeployment"
PLATFORM = "tpu-serving:index:TpuPlatform"
TPU_CLUSTER = "tpu-serving:index:TpuCluster"
TPU_POOL = "tpu-serving:index:TpuNodePool"


def _r(stack: str, type_: str, name: str, parent: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    """A plan resource as the offline preview records it (the mocks' URN: the parent's own type only)."""
    parent_urn = parent["urn"] if parent else f"urn:pulumi:{stack}::tpu-serving::{ROOT}::tpu-serving-{stack}"
    parent_type = parent["type"] if parent else ROOT
    urn = f"urn:pulumi:{stack}::tpu-serving::{parent_type}${type_}::{name}"
    return {"urn": urn, "type": type_, "name": name, "parent": parent_urn, "inputs": {}, "aliases": [], **extra}


def _cluster(stack: str, parent: dict[str, Any], name: str = "m") -> dict[str, Any]:
    return _r(stack, CLUSTER, "m-cluster", parent, inputs={"name": name, "location": "r", "project": "p"})


def _self_contained() -> dict[str, Any]:
    dep = _r("solo", DEPLOYMENT, "m", None)
    comp = _r("solo", TPU_CLUSTER, "m", dep)
    cluster = _cluster("solo", comp)
    k8s = _r("solo", "pulumi:providers:kubernetes", "m-k8s", comp)  # the model's Kubernetes objects' provider
    pools = _r("solo", TPU_POOL, "m-a", dep)
    pool = _r(
        "solo",
        NODE_POOL,
        "m-a",
        pools,
        inputs={"name": "m-a", "cluster": "<unknown>"},
        propertyDependencies={"cluster": [cluster["urn"]]},
    )
    return {"stack": "solo", "resources": [dep, comp, cluster, k8s, pools, pool], "outputs": {}}


def _platform(cluster_name: str = "m", alias: bool = True) -> dict[str, Any]:
    top = _r("plat", PLATFORM, "m", None)
    moved = [{"spec": {"parentUrn": f"urn:pulumi:plat::tpu-serving::{DEPLOYMENT}::m"}}] if alias else []
    comp = _r("plat", TPU_CLUSTER, "m", top, aliases=moved)
    return {"stack": "plat", "resources": [top, comp, _cluster("plat", comp, cluster_name)], "outputs": {}}


def _model(pool_cluster: str = "projects/p/locations/r/clusters/m") -> dict[str, Any]:
    dep = _r("model", DEPLOYMENT, "m", None)
    pools = _r("model", TPU_POOL, "m-a", dep)
    pool = _r("model", NODE_POOL, "m-a", pools, inputs={"name": "m-a", "cluster": pool_cluster})
    return {"stack": "model", "resources": [dep, pools, pool], "outputs": {}}


def test_engine_names_type_every_ancestor_and_follow_a_parent_alias() -> None:
    plat = _platform()["resources"]
    names = engine_names(plat, "plat")
    assert names[plat[2]["urn"]] == [
        f"urn:pulumi:plat::tpu-serving::{PLATFORM}${TPU_CLUSTER}${CLUSTER}::m-cluster",
        f"urn:pulumi:plat::tpu-serving::{DEPLOYMENT}${TPU_CLUSTER}${CLUSTER}::m-cluster",
    ]


def test_the_move_keeps_the_cluster_and_the_pool() -> None:
    move = plan_move(_self_contained(), [("plat", _platform()), ("model", _model())])
    assert move.problems == []
    assert [move.dest[r["urn"]] for r in _self_contained()["resources"]] == [
        "model",
        "plat",
        "plat",
        "plat",
        "model",
        "model",
    ]
    # the model's moves first (it takes copies of the providers the cluster's component holds), the deployment left
    assert move.commands[0].split("--dest ")[1].startswith("model")
    assert f"'urn:pulumi:solo::tpu-serving::{DEPLOYMENT}${TPU_POOL}::m-a'" in move.commands[0]
    assert f"'urn:pulumi:solo::tpu-serving::{DEPLOYMENT}${TPU_CLUSTER}::m'" in move.commands[1]
    assert "replaces no cluster" in render(move, "solo")


def test_a_cluster_renamed_by_the_move_fails_the_check() -> None:
    move = plan_move(_self_contained(), [("plat", _platform(cluster_name="other")), ("model", _model())])
    assert move.problems == ["plat: replaces gcp:container/cluster:Cluster m-cluster (name)"]
    assert "fails the check" in render(move, "solo")


def test_a_cluster_without_the_alias_is_deleted_and_fails_the_check() -> None:
    move = plan_move(_self_contained(), [("plat", _platform(alias=False)), ("model", _model())])
    assert "model: deletes gcp:container/cluster:Cluster m-cluster" in move.problems


def test_a_pool_on_another_cluster_fails_the_check() -> None:
    move = plan_move(_self_contained(), [("plat", _platform()), ("model", _model("projects/p/locations/r/clusters/x"))])
    assert move.problems == ["model: replaces gcp:container/nodePool:NodePool m-a (cluster)"]


def test_an_empty_base_or_no_head_fails_the_check() -> None:
    assert plan_move({"stack": "solo", "resources": []}, [("model", _model())]).problems
    assert plan_move(_self_contained(), []).problems


SERVING_GATEWAY = "tpu-serving:index:ServingGateway"
SHARED_GATEWAY = "tpu-serving:index:SharedGateway"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
SUBNET_INPUTS = {"name": "m-proxy-only", "project": "p", "region": "r", "ipCidrRange": "192.168.2.0/23"}


def _with_subnets(alias: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The base with its ServingGateway's proxy-only subnet, and the platform with its SharedGateway's of the same
    GCP name, which takes the base's by a full URN alias when ``alias``."""
    base = _self_contained()
    gateway = _r("solo", SERVING_GATEWAY, "m-gateway", base["resources"][0])
    base["resources"] += [gateway, _r("solo", SUBNET, "m-gateway-proxy-only", gateway, inputs=dict(SUBNET_INPUTS))]
    plat = _platform()
    shared = _r("plat", SHARED_GATEWAY, "m-gateway", plat["resources"][0])
    old = f"urn:pulumi:plat::tpu-serving::{DEPLOYMENT}${SERVING_GATEWAY}${SUBNET}::m-gateway-proxy-only"
    aliases = [{"urn": old}] if alias else []
    subnet = _r("plat", SUBNET, "m-gateway-proxy-only", shared, inputs=dict(SUBNET_INPUTS), aliases=aliases)
    plat["resources"] += [shared, subnet]
    return base, plat


def test_a_platform_creating_a_subnet_of_the_base_fails_the_check() -> None:
    base, plat = _with_subnets(alias=False)
    move = plan_move(base, [("plat", plat), ("model", _model())])
    assert move.problems == [
        f"plat: creates {SUBNET} m-gateway-proxy-only, GCP name 'm-proxy-only', which the base's {SUBNET} "
        "m-gateway-proxy-only holds: moved to model, it still exists when plat runs up; GCP refuses the second"
    ]


def test_the_move_hands_the_subnet_to_the_platform_before_the_model_takes_its_gateway() -> None:
    base, plat = _with_subnets(alias=True)
    move = plan_move(base, [("plat", plat), ("model", _model())])
    subnet = base["resources"][-1]["urn"]
    assert move.problems == []
    assert (move.dest[subnet], move.taken[subnet]) == ("plat", plat["resources"][-1]["urn"])
    assert not [r for d in move.diffs for r in d.added + d.removed if r["type"] == SUBNET]
    # by its own URN, first: the gateway's move to the model (which takes its children along) no longer finds it
    assert move.commands[0] == (
        "pulumi state move --source solo --dest plat --yes \\\n"
        f"    'urn:pulumi:solo::tpu-serving::{DEPLOYMENT}${SERVING_GATEWAY}${SUBNET}::m-gateway-proxy-only'"
    )
    assert f"'urn:pulumi:solo::tpu-serving::{DEPLOYMENT}${SERVING_GATEWAY}::m-gateway'" in move.commands[1]
    assert "--dest model" in move.commands[1] and "--dest plat" in move.commands[2]


def test_a_model_recreating_a_gcp_object_it_does_not_take_fails_the_check() -> None:
    base, _ = _with_subnets(alias=False)
    model = _model()
    gateway = _r("model", "tpu-serving:index:GatewayRoute", "m-route", model["resources"][0])
    model["resources"] += [gateway, _r("model", SUBNET, "m-route-proxy-only", gateway, inputs=dict(SUBNET_INPUTS))]
    move = plan_move(base, [("plat", _platform()), ("model", model)])
    assert move.problems == [
        f"model: creates {SUBNET} m-route-proxy-only, GCP name 'm-proxy-only', which the base's {SUBNET} "
        "m-gateway-proxy-only holds: model does not take it, and deletes it only after the create; GCP refuses "
        "the second"
    ]
