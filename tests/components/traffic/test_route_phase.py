"""route_phase.build_route and the model stack's plan: an HTTPRoute on the platform's Gateway, and nothing the
platform owns (no Gateway, address, proxy-only subnet, NAT, cluster or controller install)."""

import pytest

from tests.conftest import plan_of

PLATFORM = "platform-us-east5"
MODELS = ("vllm-llama33-70b-platform", "vllm-llama31-8b-platform")
PLATFORM_OWNED = (
    "kubernetes:gateway.networking.k8s.io/v1:Gateway",
    "gcp:compute/subnetwork:Subnetwork",
    "gcp:compute/routerNat:RouterNat",
    "gcp:compute/router:Router",
    "gcp:compute/address:Address",
    "gcp:container/cluster:Cluster",
    "kubernetes:yaml/v2:ConfigGroup",
    "tpu-serving:index:TpuCluster",
    "tpu-serving:index:ServingGateway",
)


def test_route_phase_platform_stack_owns_what_model_stacks_do_not_create():
    """The platform plan has each (the test below is not vacuous)."""
    types = {r.type for r in plan_of(PLATFORM).resources}
    assert set(PLATFORM_OWNED) - {"tpu-serving:index:ServingGateway"} <= types


@pytest.mark.parametrize("stack", MODELS)
def test_route_phase_model_stack_creates_nothing_the_platform_owns(stack):
    plan = plan_of(stack)
    assert [r.name for r in plan.resources if r.type in PLATFORM_OWNED] == []
    installs = [r for r in plan.resources if r.type == "tpu-serving:index:ControllerInstall"]
    assert installs and all(r.registered_outputs and r.registered_outputs["owned"] is False for r in installs)


@pytest.mark.parametrize("stack", MODELS)
def test_route_phase_route_attaches_to_the_platform_gateway(stack):
    gateway = plan_of(PLATFORM).outputs["platform"]["gateway"]
    (route,) = plan_of(stack).of_type("kubernetes:gateway.networking.k8s.io/v1:HTTPRoute")
    assert route.inputs["spec"]["parentRefs"] == [{"name": gateway["name"], "namespace": gateway["namespace"]}]
    assert route.inputs["metadata"]["namespace"] != gateway["namespace"]


def test_route_phase_platform_gateway_admits_the_model_namespaces():
    """Routes of other namespaces attach only where the listener's allowedRoutes says so (default Same); the model
    stacks' namespaces carry the label its selector names."""
    (gateway,) = plan_of(PLATFORM).of_type("kubernetes:gateway.networking.k8s.io/v1:Gateway")
    (listener,) = gateway.inputs["spec"]["listeners"]
    namespaces = listener["allowedRoutes"]["namespaces"]
    assert namespaces["from"] == "Selector"
    for stack in MODELS:
        (ns,) = plan_of(stack).of_type("kubernetes:core/v1:Namespace")
        assert namespaces["selector"]["matchLabels"].items() <= ns.inputs["metadata"]["labels"].items()
