"""Unit tests of a Pulumi program of your own that uses the components, under Pulumi's mocks: an example to copy
(docs/library-api.md, "Unit tests under Pulumi's mocks").

``pulumi.runtime.set_mocks`` stands in for the engine and the providers: each resource the program declares reaches
``Mocks.new_resource`` with its inputs, and what that returns is the resource's outputs. ``preview=True`` runs the
program as ``pulumi preview`` does: an output the mock does not return is unknown, and an ``apply`` on an unknown
value never runs. ``preview=False`` runs it as ``pulumi up`` does: such an output is None, and every ``apply`` runs,
so the program derives values from what the cloud returned (the cluster's kubeconfig from its endpoint and CA
certificate). Test both: a program can pass in one and fail in the other (``TpuCluster`` raised AttributeError under
``preview=False`` with a mock that returned no ``masterAuth``, until 0.3.0: CHANGELOG.md).

Copy ``ProviderMocks``, ``run`` and the ``mocks`` fixture into your own tests; the programs under test here are the
building-blocks example of that page (a cluster and one v6e-16 slice) and the whole deployment of a stack.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from tpu_serving import TpuCluster, TpuClusterArgs, TpuNodePool, TpuNodePoolArgs, TpuServingDeployment, catalog
from tpu_serving import TpuServingDeploymentArgs as DeploymentArgs
from tpu_serving.config import validate_stack

ENDPOINT = "203.0.113.10"
DNS_ENDPOINT = "gke-0123456789abcdef-012345678901.us-east5.gke.goog"
CA = "Q0EgY2VydGlmaWNhdGU="
CLUSTER = "gcp:container/cluster:Cluster"
ADDRESS = "gcp:compute/address:Address"
GATEWAY_ADDRESS = "10.0.0.50"


class ProviderMocks(pulumi.runtime.Mocks):
    """Each resource's outputs are its inputs plus, with ``computed``, what its provider computes that the program
    reads (a GKE cluster's IP endpoint, CA certificate and DNS-based endpoint, camelCase as the provider returns them, and a reserved
    address's IP, which a probe through a Gateway reads); every resource's type and inputs are kept for the test's
    assertions."""

    def __init__(self, computed: bool = True) -> None:
        self.computed = computed
        self.resources: list[tuple[str, dict[str, Any]]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append((args.typ, dict(args.inputs)))
        outputs = dict(args.inputs)
        if self.computed and args.typ == CLUSTER:
            dns = {
                "dnsEndpointConfig": {
                    **outputs["controlPlaneEndpointsConfig"]["dnsEndpointConfig"],
                    "endpoint": DNS_ENDPOINT,
                }
            }
            outputs |= {
                "endpoint": ENDPOINT,
                "masterAuth": {"clusterCaCertificate": CA},
                "controlPlaneEndpointsConfig": dns,
            }
        if self.computed and args.typ == ADDRESS and "address" not in outputs:
            outputs["address"] = GATEWAY_ADDRESS
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        return {}  # no invoke in these programs (an existing cluster's getCluster would answer here)

    def inputs(self, typ: str) -> list[dict[str, Any]]:
        """The inputs of every resource of type ``typ`` (a component has its own type, ``tpu-serving:index:...``)."""
        return [inputs for kind, inputs in self.resources if kind == typ]


def run(program: Callable[[], None]) -> None:
    """Run ``program`` under the mocks set last and wait until every resource it declared is registered and every
    apply has run (``pulumi.runtime.test``): the test then asserts on what the mocks received and on what the applies
    collected. An apply on an unknown value never runs, so a test that asserts inside one passes unseen; collect
    instead, and assert after the run that it ran."""
    pulumi.runtime.test(program)()


def set_mocks(preview: bool, computed: bool = True) -> ProviderMocks:
    """Fresh mocks, set for the program that runs next."""
    found = ProviderMocks(computed)
    pulumi.runtime.set_mocks(found, project="platform-team", stack="test", preview=preview)
    return found


@pytest.fixture(params=[True, False], ids=["preview", "up"])
def mocks(request: pytest.FixtureRequest) -> ProviderMocks:
    """Fresh mocks for each test, once as ``pulumi preview`` and once as ``pulumi up``."""
    return set_mocks(preview=request.param)


def building_blocks() -> tuple[TpuCluster, TpuNodePool]:
    """The program under test: a cluster and one v6e-16 slice (docs/library-api.md, "The building blocks")."""
    cluster = TpuCluster(
        "serving",
        TpuClusterArgs(
            project="my-project",
            region="us-east5",
            zone="us-east5-b",
            name="serving",
        ),
    )
    slice_ = TpuNodePool(
        "serving-v6e16",
        TpuNodePoolArgs(
            project="my-project",
            region="us-east5",
            zone="us-east5-b",
            cluster=cluster.cluster.id,
            service_account_id="serving-v6e16",
            shape=catalog.resolve_slice_name("v6e-16"),
            pool_names=("serving-v6e16",),
        ),
    )
    return cluster, slice_


def test_library_mocks_building_blocks_declare_the_slice_as_gke_needs_it(mocks: ProviderMocks) -> None:
    """What the node pool asks GKE for, read from the inputs the mock received: the whole 4x4 slice (4 VMs of 4
    chips), compact placement with its topology, in the one zone; the same in preview and up."""
    selectors: list[dict[str, str]] = []
    run(lambda: selectors.append(building_blocks()[1].node_selector))

    pools = {p["name"]: p for p in mocks.inputs("gcp:container/nodePool:NodePool")}  # registered in any order
    assert sorted(pools) == ["serving-cpu", "serving-v6e16"]
    pool = pools["serving-v6e16"]
    assert pool["nodeCount"] == 4
    assert pool["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    assert pool["nodeLocations"] == ["us-east5-b"]
    assert pool["nodeConfig"]["machineType"] == "ct6e-standard-4t"
    assert selectors == [
        {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}
    ]


def test_library_mocks_cluster_kubeconfig_from_what_the_provider_returns(mocks: ProviderMocks) -> None:
    """The kubeconfig is built from the DNS-based endpoint the mock returned, with no CA pinned (the endpoint's
    certificate is a public CA's), in preview and up alike, and the cluster asks for Workload Identity's pool of its
    project."""
    configs: list[str] = []
    run(lambda: building_blocks()[0].kubeconfig.apply(configs.append))

    assert len(configs) == 1  # the apply ran
    server = json.loads(configs[0])["clusters"][0]["cluster"]
    assert server == {"server": f"https://{DNS_ENDPOINT}"}
    (cluster,) = mocks.inputs(CLUSTER)
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "my-project.svc.id.goog"}


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_library_mocks_cluster_with_outputs_the_mock_does_not_return(preview: bool) -> None:
    """A mock that returns only the inputs, as most start: an output it leaves out is unknown in preview (an apply
    on it never runs) and None in up, where the cluster's kubeconfig still builds, without the endpoint (it raised
    AttributeError before)."""
    set_mocks(preview, computed=False)
    known: list[bool] = []
    configs: list[str] = []

    def program() -> None:
        kubeconfig = building_blocks()[0].kubeconfig
        pulumi.Output.from_input(kubeconfig.is_known()).apply(known.append)
        kubeconfig.apply(configs.append)

    run(program)
    assert known == [not preview]
    if preview:
        assert configs == []
    else:
        (config,) = configs
        assert json.loads(config)["clusters"][0]["cluster"] == {"server": "https://"}


STACK = {
    "project": "my-project-1",
    "region": "us-east5",
    "zone": "us-east5-b",
    "cluster": {"name": "mine"},
    "tpuSlices": [{"name": "v5e16", "slice": "v5e-16"}],
    "buckets": [{"purpose": "checkpoints", "workloadAccess": "read"}, {"purpose": "scratch"}],
    "workloadIdentity": {"namespace": "serving"},
    "serving": {
        "backend": "vllm",
        "slices": ["v5e16"],
        "model": "llama-3.3-70b-instruct",
        "servedModelName": "meta-llama/Llama-3.3-70B-Instruct",
        "singleGroup": "accepted",
    },
    "observability": {"unpaged": True},
    "production": False,
}
"""A stack's settings in code (``validate_stack``), as a program of your own may hold them."""


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_library_mocks_deployment_with_outputs_the_mock_does_not_return(preview: bool) -> None:
    """The whole deployment under a mock that returns only the inputs: it builds in up as in preview (its cluster's
    kubeconfig raised AttributeError in up before) and registers its serving objects."""
    mocks = set_mocks(preview, computed=False)
    run(lambda: TpuServingDeployment("mine", DeploymentArgs(validate_stack(STACK))) and None)
    assert len(mocks.inputs("kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet")) == 1


def test_library_mocks_deployment_serves_on_the_slice(mocks: ProviderMocks) -> None:
    """The whole deployment under mocks: its LeaderWorkerSet makes one group on the slice, of the slice's 4 VMs,
    its pods requesting each VM's 4 chips on the slice's node pool."""
    run(lambda: TpuServingDeployment("mine", DeploymentArgs(validate_stack(STACK))) and None)

    (lws,) = mocks.inputs("kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet")
    assert lws["spec"]["replicas"] == 1 and lws["spec"]["leaderWorkerTemplate"]["size"] == 4
    worker = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    assert worker["nodeSelector"]["cloud.google.com/gke-tpu-topology"] == "4x4"
    assert worker["containers"][0]["resources"]["limits"]["google.com/tpu"] == "4"


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_library_mocks_deployment_behind_a_gateway_with_outputs_the_mock_does_not_return(preview: bool) -> None:
    """Library review 15, M1: behind a Gateway, the probe's URL through it joined the reserved address, which an
    inputs-only mock leaves None in up: a TypeError inside pulumi's apply, naming no line of the program."""
    mocks = set_mocks(preview, computed=False)
    run(lambda: TpuServingDeployment("mine", DeploymentArgs(validate_stack({**STACK, "gateway": {}}))) and None)
    assert len(mocks.inputs("kubernetes:gateway.networking.k8s.io/v1:Gateway")) == 1
