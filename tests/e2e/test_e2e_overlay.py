"""The end-to-end overlay: every shipped stack in existing-cluster mode with every cloud resource named existing.

Each converted stack validates, previews offline with no ``gcp:`` resource and no GCP call (so ``pulumi up`` needs
only the Kubernetes provider), declares the same Kubernetes objects as the stack itself, and passes the runtime
model (``make check``). The checks are plain
functions, and each is shown failing on a plan that breaks it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

import pytest

from tests.conftest import STACKS, STACKS_ROOT, plan_of
from tpu_serving_tools.check import run_checks
from tpu_serving_tools.e2e.overlay import OverlayError, existing_cluster_overlay
from tpu_serving_tools.preview.offline import Plan, main_program, run_program
from tpu_serving_tools.preview.stack_files import config_map, load_project, stack_file_config
from tpu_serving_tools.runtime.planview import PlanView

KUBECONFIG = "~/.kube/tpu-serving-e2e.yaml"
MANIFESTS = {
    "lws": "/srv/e2e/manifests/lws-v0.10.0.yaml",
    "jobset": "/srv/e2e/manifests/jobset-v0.12.0.yaml",
    "pathways-job": "/srv/e2e/manifests/pathways-job-v0.1.4.yaml",
    "metrics-adapter": "/srv/e2e/manifests/metrics-adapter-v0.16.10.yaml",
}

NODE_RIGHTS = (
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
)


def different_objects(plan: Plan) -> frozenset[tuple[str, str | None, str]]:
    """Kubernetes objects (type, namespace, name) that the design makes differ between a stack and its
    existing-cluster form: the operators' node ClusterRole and its binding (``<namespace>-tpu-serving-operator``),
    which a stack grants only on a cluster it creates (an existing cluster's nodes are its owner's:
    :mod:`tpu_serving.tenancy.operator_access`). The rest of the in-cluster half is the same objects on either cluster; only
    their inputs may differ (the Kubernetes service account's annotation names the existing account, a release
    manifest is read from its local file)."""
    namespace = str(plan.outputs["namespace"])
    return frozenset((t, None, f"{namespace}-tpu-serving-operator") for t in NODE_RIGHTS)


Obj = tuple[str, str | None, str]


def converted(stack: str, **changes: Any) -> dict[str, Any]:
    """``stack``'s config through the overlay, then ``changes`` (top-level keys) on top."""
    project = load_project(STACKS_ROOT)
    config = existing_cluster_overlay(stack_file_config(project, stack), KUBECONFIG, MANIFESTS)
    return {**config, **changes}


def preview(stack: str, config: Mapping[str, Any]) -> Plan:
    """The offline preview of ``stack`` with ``config`` as its stack file's ``config:``."""
    project = load_project(STACKS_ROOT)
    return run_program(main_program(project), config_map(project, config), project=project.name, stack=stack)


@functools.cache
def converted_plan(stack: str) -> Plan:
    """The offline preview of ``stack`` through the overlay (once per test process)."""
    return preview(stack, converted(stack))


def gcp_parts(plan: Plan) -> list[str]:
    """Every ``gcp:`` resource the plan declares and every GCP function or read it made: what a deploy would need the
    Google provider for."""
    resources = [f"{r.type} {r.name}" for r in plan.resources if r.type.startswith("gcp:")]
    return resources + [f"invoke {t}" for t in plan.invokes if t.startswith("gcp:")]


def object_type(r: Any) -> str:
    """The type of the object a resource declares: a Patch resource's is its kind's (``PriorityClassPatch``, the
    existing-cluster form's shared PriorityClasses, declares a PriorityClass)."""
    return str(r.type).removesuffix("Patch")


def kubernetes_objects(plan: Plan) -> set[Obj]:
    """(type, namespace, name) of every Kubernetes object the plan declares (custom resources of kubernetes: types)."""
    out = set()
    for r in plan.resources:
        if r.custom and r.type.startswith("kubernetes:"):
            meta = r.inputs.get("metadata") or {}
            out.add((object_type(r), meta.get("namespace"), str(meta.get("name") or r.name)))
    return out


def object_differences(normal: Plan, existing: Plan, allowed: frozenset[Obj] = frozenset()) -> set[Obj]:
    """Objects of one plan and not the other, beyond those ``allowed`` to differ."""
    return (kubernetes_objects(normal) ^ kubernetes_objects(existing)) - allowed


DIFFERENT_INPUTS = frozenset(
    {
        ("kubernetes:core/v1:ServiceAccount", ".metadata.annotations.iam.gke.io/gcp-service-account"),
        ("kubernetes:scheduling.k8s.io/v1:PriorityClass", ".preemptionPolicy"),
        ("kubernetes:scheduling.k8s.io/v1:PriorityClass", ".metadata.labels.app.kubernetes.io/instance"),
        ("kubernetes:gateway.networking.k8s.io/v1:Gateway", ".spec.addresses[0].value"),
        ("kubernetes:monitoring.googleapis.com/v1:PodMonitoring", ".spec.endpoints[0].params.target[0]"),
        ("kubernetes:apps/v1:Deployment", ".metadata.annotations.tpu-serving.dev/probe"),
        ("kubernetes:cloud.google.com/v1:ComputeClass", ".spec.nodePoolConfig.serviceAccount"),
    }
)
"""(type, field) of the objects' inputs that differ by design: the workloads' Kubernetes service account names the
existing GCP service account (an email) where a created one's is known only once it exists. On an existing cluster
the serving PriorityClass never preempts (the other tenants' pods are not the stack's to evict), and its patch
carries only the labels every tenant shares (tenancy.SHARED_LABEL_KEYS: no instance label). The Gateway's
address is named existing (tools/e2e/overlay.py ``gateway_address``: a name of its own, a documentation IP): the
Gateway names it, the serving probe through it targets its IP (known, where a reserved one's is known once it is
reserved), and the prober's annotation names it. A ComputeClass over existing pools names no node account for the
pools GKE creates (the slices' own account is the stack's only where it makes their pools)."""

PINNED_POOLS = (
    ".spec.leaderWorkerTemplate.leaderTemplate.spec.affinity",
    ".spec.leaderWorkerTemplate.workerTemplate.spec.affinity",
)
"""Where a vLLM LeaderWorkerSet on an existing cluster pins its groups to the stack's node pools (none on a created
cluster, whose pools of the slice's shape are all the stack's)."""


def input_differences(normal: Plan, existing: Plan) -> set[tuple[str, str]]:
    """(type, field path) of every input that differs between an object of one plan and the same object of the
    other: a slice count, a bucket, a pool name the existing-cluster form got wrong shows here."""

    def fields(value: Any, path: str = "") -> dict[str, Any]:
        if isinstance(value, dict):
            return {p: v for k, item in value.items() for p, v in fields(item, f"{path}.{k}").items()}
        if isinstance(value, list):
            return {p: v for i, item in enumerate(value) for p, v in fields(item, f"{path}[{i}]").items()}
        return {path: value}

    def by_object(plan: Plan) -> dict[Obj, dict[str, Any]]:
        out = {}
        for r in plan.resources:
            if r.custom and r.type.startswith("kubernetes:"):
                meta = r.inputs.get("metadata") or {}
                out[(object_type(r), meta.get("namespace"), str(meta.get("name") or r.name))] = fields(r.inputs)
        return out

    a, b = by_object(normal), by_object(existing)
    return {(o[0], f) for o in a.keys() & b.keys() for f in a[o].keys() | b[o].keys() if a[o].get(f) != b[o].get(f)}


@pytest.mark.parametrize("stack", STACKS)
def test_e2e_overlay_stack_previews_with_no_gcp_resource_nor_call(stack):
    from tpu_serving.config import load_stack_config

    if "platform" in stack_file_config(load_project(STACKS_ROOT), stack):
        pytest.skip(
            "a model stack: its overlay (platform.kubeconfig, existingNodePools, no cluster.existing) is "
            "test_model_overlay_puts_a_model_stack_on_its_platforms_cluster_with_no_gcp_resource_nor_call's"
        )

    config = converted(stack)
    project = load_project(STACKS_ROOT)
    cfg = load_stack_config(config_map(project, config))  # validates, every problem at once
    assert cfg.existing and cfg.cluster.existing is not None and cfg.cluster.existing.kubeconfig == KUBECONFIG
    plan = converted_plan(stack)
    assert gcp_parts(plan) == []
    assert kubernetes_objects(plan)
    assert object_differences(plan_of(stack), plan, different_objects(plan_of(stack))) == set()
    assert {d for d in input_differences(plan_of(stack), plan) if not d[1].startswith(PINNED_POOLS)} <= DIFFERENT_INPUTS
    # every controller install reads its manifest from the local file
    installs = [r for r in plan.resources if r.type == "kubernetes:yaml/v2:ConfigGroup"]
    assert installs and all(r.inputs["files"][0] in MANIFESTS.values() for r in installs)
    # the preview's list: every cloud resource named existing
    statuses = {e["status"] for e in plan.outputs["cloudResources"]}
    assert statuses == {"existing"}
    # and it would run (make check): pods on the existing pools, identities, prerequisites, the scale paths
    failures = [
        f"[{r.category}] {f.subject}: {f.reason}" for r in run_checks(PlanView(plan.as_json())) for f in r.failures()
    ]
    assert failures == []


def test_e2e_overlay_the_check_fails_when_a_gcp_resource_slips_in():
    """A key left to create puts GCP resources (or a GCP call) in the plan, and the check names each of them."""
    stack = "vllm-llama33-70b-v5e16"
    config = converted(stack, projectApis="create")
    config["observability"] = {**config["observability"], "cloudResources": "create"}
    config["serving"] = {
        **config["serving"],
        "autoscaling": {**config["serving"]["autoscaling"], "adapterIam": "create"},
    }
    found = gcp_parts(preview(stack, config))
    assert "gcp:projects/service:Service vllm70b-apis-container" in found
    assert "gcp:monitoring/dashboard:Dashboard vllm70b-observability-dashboard" in found
    assert "gcp:projects/iAMMember:IAMMember vllm70b-autoscaler-adapter-viewer" in found
    assert "invoke gcp:organizations/getProject:getProject" in found
    config = converted(stack)
    config["cluster"] = {**config["cluster"], "existing": {"gke": {}}}  # a GKE cluster read by name: a GCP call
    assert gcp_parts(preview(stack, config)) == ["invoke gcp:container/getCluster:getCluster"]
    one = next(r for r in plan_of(stack).resources if r.type == "gcp:storage/bucket:Bucket")
    slipped = dataclasses.replace(converted_plan(stack), resources=[*converted_plan(stack).resources, one])
    assert gcp_parts(slipped) == [f"gcp:storage/bucket:Bucket {one.name}"]


def test_e2e_overlay_the_object_comparison_fails_on_a_missing_object():
    stack = "vllm-llama33-70b-v5e16"
    plan = converted_plan(stack)
    kept = [r for r in plan.resources if r.type != "kubernetes:gateway.networking.k8s.io/v1:Gateway"]
    missing = object_differences(plan_of(stack), dataclasses.replace(plan, resources=kept), different_objects(plan))
    assert missing == {("kubernetes:gateway.networking.k8s.io/v1:Gateway", "vllm-llama70b", "vllm-api-gateway")}


def test_e2e_overlay_the_input_comparison_fails_on_a_changed_field():
    """An existing-cluster form that counted its slices from the pools it creates (none) would run no model server."""
    stack = "saxml-175b-v5e32x2"
    plan = converted_plan(stack)
    jobset = next(r for r in plan.resources if r.type.endswith(":JobSet"))
    jobs = [{**job, "replicas": 0} for job in jobset.inputs["spec"]["replicatedJobs"]]
    emptied = dataclasses.replace(
        jobset, inputs={**jobset.inputs, "spec": {**jobset.inputs["spec"], "replicatedJobs": jobs}}
    )
    broken = dataclasses.replace(plan, resources=[emptied if r is jobset else r for r in plan.resources])
    assert ("kubernetes:jobset.x-k8s.io/v1alpha2:JobSet", ".spec.replicatedJobs[0].replicas") in input_differences(
        plan_of(stack), broken
    )


def test_e2e_overlay_is_pure_and_keeps_the_stack_file_keys():
    project = load_project(STACKS_ROOT)
    original = stack_file_config(project, "llama31-405b-v6e16")
    before = repr(original)
    config = existing_cluster_overlay(original, KUBECONFIG, {"lws": "/m/lws.yaml"}, context="kind-e2e")
    assert repr(original) == before  # not changed in place
    assert config["cluster"]["existing"] == {"kubeconfig": KUBECONFIG, "context": "kind-e2e", "nodeUpgradesHeld": True}
    assert not {"masterAuthorizedNetworks", "publicControlPlane", "cloudNat", "releaseChannel"} & set(config["cluster"])
    assert (
        config["workloadIdentity"]["existingGcpServiceAccount"]
        == "llama405b-wl@tpu-serving-demo.iam.gserviceaccount.com"
    )
    assert config["controllerManifests"] == {"lws": "/m/lws.yaml"}
    assert all(b["existing"] is True and "storageClass" not in b for b in config["buckets"])


def test_e2e_overlay_names_the_image_mirror_existing():
    """A stack that creates its mirror's repositories (the default with a cluster it creates) names them existing, so
    its pods pull the same paths; a stack already on an existing cluster (no mirror unless asked) keeps its own."""
    project = load_project(STACKS_ROOT)
    config = existing_cluster_overlay(stack_file_config(project, "vllm-llama33-70b-v5e16"), KUBECONFIG, {})
    assert config["imageMirror"] == {
        "mode": "existing",
        "dockerHub": "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-dockerhub",
        "ghcr": "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-ghcr",
    }
    assert "imageMirror" not in existing_cluster_overlay(
        stack_file_config(project, "vllm-llama33-70b-existing"), KUBECONFIG, {}
    )


def test_e2e_overlay_refuses_an_unknown_controller():
    project = load_project(STACKS_ROOT)
    with pytest.raises(OverlayError, match="unknown controller"):
        existing_cluster_overlay(stack_file_config(project, "llama31-405b-v6e16"), KUBECONFIG, {"kueue": "/m.yaml"})


def test_e2e_overlay_says_node_upgrades_are_held_where_the_stacks_cluster_held_them():
    """The production example's created cluster holds node upgrades (a maintenance exclusion, create-only); on the
    e2e run's existing cluster the same intent is cluster.existing.nodeUpgradesHeld, which its production gate reads."""
    project = load_project(STACKS_ROOT)
    held = existing_cluster_overlay(stack_file_config(project, "vllm-llama33-70b-v6e8"), KUBECONFIG, {})
    assert held["cluster"]["existing"]["nodeUpgradesHeld"] is True
    config = stack_file_config(project, "vllm-llama33-70b-v6e8")
    edited = {**config, "cluster": {k: v for k, v in config["cluster"].items() if k != "maintenance"}}
    assert "nodeUpgradesHeld" not in existing_cluster_overlay(edited, KUBECONFIG, {})["cluster"]["existing"]


def test_local_platform_reference_names_the_platform_in_the_local_backends_one_organization():
    from tpu_serving_tools.e2e.overlay import local_platform_reference

    shipped = stack_file_config(load_project(STACKS_ROOT), "vllm-llama31-8b-platform")
    assert shipped["platform"]["stack"] == "my-org/tpu-serving/platform-us-east5"
    local = local_platform_reference(shipped, "tpu-serving")
    assert local["platform"] == {**shipped["platform"], "stack": "organization/tpu-serving/platform-us-east5"}
    assert shipped["platform"]["stack"] == "my-org/tpu-serving/platform-us-east5"  # pure
    assert {k: v for k, v in local.items() if k != "platform"} == {k: v for k, v in shipped.items() if k != "platform"}


def test_local_platform_reference_leaves_a_stack_without_platform_as_it_is():
    from tpu_serving_tools.e2e.overlay import local_platform_reference

    shipped = stack_file_config(load_project(STACKS_ROOT), "platform-us-east5")
    assert local_platform_reference(shipped, "tpu-serving") == shipped


def test_e2e_overlay_puts_a_platform_stack_on_the_existing_cluster_with_no_gcp_resource_nor_call():
    """The platform stack through the overlay: a platform on an existing cluster, its controllers from the local
    manifests, the metrics adapter the cluster's, no ``gcp:`` resource and no GCP call."""
    config = converted("platform-us-east5")
    assert config["cluster"]["existing"] == {
        "kubeconfig": KUBECONFIG,
        "nodeUpgradesHeld": True,
        "nodeServiceAccount": "tpu-platform-nodes@tpu-serving-demo.iam.gserviceaccount.com",
    }
    assert "releaseChannel" not in config["cluster"] and "buckets" not in config
    assert config["sharedPlatform"]["metricsAdapterInstall"] == "existing"
    assert config["sharedPlatform"]["modelDeployers"] == []
    assert config["controllerManifests"] == {"jobset": MANIFESTS["jobset"], "lws": MANIFESTS["lws"]}
    plan = converted_plan("platform-us-east5")
    assert gcp_parts(plan) == []
    files = [f for r in plan.resources if r.type == "kubernetes:yaml/v2:ConfigGroup" for f in r.inputs["files"]]
    assert sorted(files) == sorted([MANIFESTS["jobset"], MANIFESTS["lws"]])
    assert any(r.type == "kubernetes:gateway.networking.k8s.io/v1:Gateway" for r in plan.resources)


@pytest.mark.parametrize("stack", ["vllm-llama31-8b-platform", "vllm-llama33-70b-platform"])
def test_model_overlay_puts_a_model_stack_on_its_platforms_cluster_with_no_gcp_resource_nor_call(tmp_path, stack):
    """A model stack through the overlay: its platform read from the local backend and reached through the run's
    kubeconfig, its slices' pools named existing as it would name them, and no ``gcp:`` resource nor GCP call."""
    import shutil

    import yaml

    from tpu_serving_tools.preview.offline import preview_stack

    shipped = stack_file_config(load_project(STACKS_ROOT), stack)
    config = existing_cluster_overlay(shipped, KUBECONFIG, {})
    assert config["platform"] == {
        **shipped["platform"],
        "stack": "organization/tpu-serving/platform-us-east5",
        "kubeconfig": KUBECONFIG,
    }
    name = shipped["cluster"]["name"]
    assert [s["existingNodePools"] for s in config["tpuSlices"]] == [
        [f"{name}-{s['name']}"] for s in shipped["tpuSlices"]
    ]
    assert "controllerInstalls" not in config and "existing" not in config["cluster"]
    (tmp_path / "stacks").mkdir()
    for f in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(STACKS_ROOT / f, tmp_path / f)
    shutil.copy(STACKS_ROOT / "stacks" / "Pulumi.platform-us-east5.yaml", tmp_path / "stacks")
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    plan = preview_stack(tmp_path, stack)
    assert gcp_parts(plan) == []
    assert plan.of_type("kubernetes:gateway.networking.k8s.io/v1:HTTPRoute")
    assert len(plan.of_type("tpu-serving:index:ExistingTpuNodePool")) == len(shipped["tpuSlices"])
