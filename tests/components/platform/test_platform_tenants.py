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


def _alert_titles(stack):
    return [str(r.inputs["displayName"]) for r in plan_of(stack).of_type("gcp:monitoring/alertPolicy:AlertPolicy")]


def test_platform_tenants_alert_titles_do_not_collide():
    """An on-call engineer tells two tenants' pages apart by their titles: each model's names its namespace, and the
    platform's own controller page is the only one on the controllers (no second page for one incident)."""
    titles = {s: _alert_titles(s) for s in ("platform-us-east5", *MODELS)}
    assert all(len(t) >= 1 for t in titles.values()) and len(titles["vllm-llama31-8b-platform"]) >= 10
    assert _repeated([t for ts in titles.values() for t in ts]) == []
    for model in MODELS:
        namespace = plan_of(model).of_type("kubernetes:core/v1:Namespace")[0].inputs["metadata"]["name"]
        assert all(t.startswith(f"tpu-platform/{namespace}: ") for t in titles[model]), titles[model]
    controller = [t for ts in titles.values() for t in ts if t.endswith("Serving controller unavailable")]
    assert controller == ["tpu-platform: Serving controller unavailable"]


def test_platform_tenants_cloud_resources_do_not_collide():
    """Service accounts, buckets and log-based metrics: project-wide identifiers. (Dashboards' display names are not
    identifiers: Cloud Monitoring names them itself; alert titles are the test above's.)"""
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


def test_platform_tenants_patch_the_shared_priority_classes_with_the_same_fields():
    """Two tenants server-side-apply the same PriorityClass, each as its own field manager: a field they set to
    different values is a conflict, and the second tenant's pulumi up fails (GKE review, B1)."""
    patches = {}
    for stack in MODELS:
        for r in plan_of(stack).of_type("kubernetes:scheduling.k8s.io/v1:PriorityClassPatch"):
            patches.setdefault(r.inputs["metadata"]["name"], []).append(r.inputs)
    assert sorted(patches) == ["tpu-serving-batch", "tpu-serving-online"]
    for name, both in patches.items():
        assert len(both) == 2 and both[0] == both[1], name
