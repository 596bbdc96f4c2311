"""Two model stacks on one platform (pool_phase, naming): their node pools, namespaces and cluster-scoped objects do not
collide on the shared cluster, nor their project-wide cloud resources."""

from collections import Counter

from tests.conftest import plan_of

MODELS = ("vllm-llama33-70b-platform", "vllm-llama31-8b-platform")
SHARED_BY_DESIGN = {("PriorityClass", "tpu-serving-online"), ("PriorityClass", "tpu-serving-batch")}
"""The serving priorities every tenant applies with the same fields (docs/existing-cluster.md)."""


def _repeated(names):
    return sorted(n for n, c in Counter(names).items() if c > 1)


def test_platform_tenants_node_pools_do_not_collide():
    pools = [p.inputs["name"] for s in MODELS for p in plan_of(s).of_type("gcp:container/nodePool:NodePool")]
    assert len(pools) == 5 and _repeated(pools) == []
    clusters = {p.inputs["cluster"] for s in MODELS for p in plan_of(s).of_type("gcp:container/nodePool:NodePool")}
    assert len(clusters) == 1  # one cluster: the platform's


def test_platform_tenants_namespaces_and_cluster_objects_do_not_collide():
    namespaces = [
        r.inputs["metadata"]["name"] for s in MODELS for r in plan_of(s).of_type("kubernetes:core/v1:Namespace")
    ]
    assert len(namespaces) == 2 and _repeated(namespaces) == []
    cluster_scoped = [
        (r.inputs["kind"], r.inputs["metadata"]["name"])
        for s in MODELS
        for r in plan_of(s).resources
        if r.type.startswith("kubernetes:") and "kind" in r.inputs and "namespace" not in r.inputs.get("metadata", {})
    ]
    assert _repeated(cluster_scoped) == sorted(SHARED_BY_DESIGN)


def test_platform_tenants_cloud_resources_do_not_collide():
    """Service accounts, buckets and log-based metrics: project-wide identifiers. (Alert policies' and dashboards'
    display names are not identifiers: Cloud Monitoring names them itself; both tenants' say the platform's cluster.)"""
    named = [
        (r.type, str(r.inputs.get("accountId") or r.inputs.get("name")))
        for s in MODELS
        for r in plan_of(s).resources
        if r.custom
        and r.type.startswith("gcp:")
        and not r.type.startswith("gcp:projects/")
        and r.type != "gcp:container/nodePool:NodePool"
        and (r.inputs.get("accountId") or r.inputs.get("name"))
    ]
    assert _repeated(named) == []
