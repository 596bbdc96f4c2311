"""What the recording monitor adds to a plan beyond the resources: each component's registered outputs and each
resource's aliases. Each output is held to the resources of the same plan it names (what it should be comes from
the plan's objects, not from the component that wrote it), and the aliases to the plan's parent links."""

from __future__ import annotations

import pytest

from tests.conftest import STACKS, plan_of
from tpu_serving_tools.preview.offline import Plan, RecordedResource

DEPLOYMENT = "tpu-serving:index:TpuServingDeployment"
BORN_UNDER_THE_DEPLOYMENT = {
    "tpu-serving:index:Observability",
    "tpu-serving:index:ExistingCluster",
    "tpu-serving:index:ExistingTpuNodePool",
    "tpu-serving:index:ExistingCpuNodePool",
    "tpu-serving:index:HostMaintenanceGate",
    "tpu-serving:index:PlatformCluster",
    "tpu-serving:index:TpuComputeClass",
}
"""Direct children of the deployment that the program never created at the top of the stack (those of an existing
cluster came after the deployment component, as did the host-maintenance gate)."""


def _children(plan: Plan, parent: RecordedResource, type_: str | None = None) -> list[RecordedResource]:
    return [r for r in plan.resources if r.parent == parent.urn and (type_ is None or r.type == type_)]


def _descendants(plan: Plan, root: RecordedResource) -> list[RecordedResource]:
    found, frontier = [], [root.urn]
    while frontier:
        kids = [r for r in plan.resources if r.parent in frontier]
        found += kids
        frontier = [r.urn for r in kids]
    return found


def _components(plan: Plan, type_: str) -> list[RecordedResource]:
    return plan.of_type(f"tpu-serving:index:{type_}")


@pytest.mark.parametrize("stack", STACKS)
def test_every_library_component_registers_its_outputs(stack: str):
    components = [r for r in plan_of(stack).resources if r.type.startswith("tpu-serving:index:")]
    assert components, "no library component in the plan"
    missing = [r.urn for r in components if r.registered_outputs is None]
    assert not missing, f"components whose outputs were never registered: {missing}"


@pytest.mark.parametrize("stack", STACKS)
def test_observability_outputs_name_its_alert_policies_and_pod_monitorings(stack: str):
    plan = plan_of(stack)
    for obs in _components(plan, "Observability"):
        out = obs.registered_outputs or {}
        below = _descendants(plan, obs)
        alerts = sorted(r.inputs["displayName"] for r in below if r.type == "gcp:monitoring/alertPolicy:AlertPolicy")
        assert sorted(out["alertPolicies"]) == alerts
        monitorings = sorted(r.inputs["metadata"]["name"] for r in plan.resources if r.type.endswith(":PodMonitoring"))
        assert sorted(out["podMonitorings"]) == monitorings
        assert "dashboard" in out


@pytest.mark.parametrize("stack", STACKS)
def test_controller_install_outputs_are_the_manifest_it_applies(stack: str):
    plan = plan_of(stack)
    installs = _components(plan, "ControllerInstall")
    assert installs, "every stack installs a controller"
    for install in installs:
        out = install.registered_outputs or {}
        if out.get("owned") is False:  # the cluster runs it (controllerInstalls: existing): nothing applied
            assert _children(plan, install, "kubernetes:yaml/v2:ConfigGroup") == []
            assert out["upstream"].endswith(f"/{out['version']}/manifests.yaml")
            continue
        (group,) = _children(plan, install, "kubernetes:yaml/v2:ConfigGroup")
        assert [out["url"]] == group.inputs["files"]
        assert (
            f"/{out['version']}/" in out["url"]
            or out["url"].endswith(f"-{out['version']}")
            or (f"-{out['version']}/" in out["url"])
        )


@pytest.mark.parametrize("stack", STACKS)
def test_workload_identity_outputs_are_its_namespace_and_service_account(stack: str):
    plan = plan_of(stack)
    for wi in _components(plan, "WorkloadIdentity"):
        out = wi.registered_outputs or {}
        (ksa,) = [r for r in _descendants(plan, wi) if r.type == "kubernetes:core/v1:ServiceAccount"]
        assert out["serviceAccount"] == ksa.inputs["metadata"]["name"]
        assert out["namespace"] == ksa.inputs["metadata"]["namespace"]


@pytest.mark.parametrize("stack", STACKS)
def test_vllm_outputs_name_its_service_and_leader_pod(stack: str):
    plan = plan_of(stack)
    for vllm in _components(plan, "VllmServing"):
        out = vllm.registered_outputs or {}
        below = _descendants(plan, vllm)
        services = {r.inputs["metadata"]["name"]: r for r in below if r.type == "kubernetes:core/v1:Service"}
        assert out["service"] in services
        namespace = services[out["service"]].inputs["metadata"]["namespace"]
        assert out["portForward"].startswith(f"kubectl -n {namespace} port-forward svc/{out['service']} ")
        # The leader of group 0 is the pod `<lws>-0` (lws v0.10.0 pkg/controllers/leaderworkerset_controller.go
        # names the leader StatefulSet after the LWS; a StatefulSet's pods are `<set>-<ordinal>`).
        lws = [r.inputs["metadata"]["name"] for r in below if r.type.endswith(":LeaderWorkerSet")]
        assert out["leaderPod"] in {f"{name}-0" for name in lws}


@pytest.mark.parametrize("stack", STACKS)
def test_each_child_of_the_deployment_keeps_its_old_place_at_the_top_of_the_stack(stack: str):
    """Before the deployment component existed its children sat at the top of the stack: each direct child
    carries an alias without a parent (the engine's spelling of the stack's top), so a stack deployed then
    keeps its resources; nothing else carries one. Observability came later, under the component from the
    start: it has no older place."""
    plan = plan_of(stack)
    (deployment,) = plan.of_type(DEPLOYMENT)
    direct = {r.urn for r in _children(plan, deployment) if r.type not in BORN_UNDER_THE_DEPLOYMENT}
    aliased = {r.urn for r in plan.resources if {"spec": {"noParent": True}} in r.aliases}
    assert direct and aliased == direct
