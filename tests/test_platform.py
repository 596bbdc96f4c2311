"""platform: a platform stack on a cluster it creates or (``cluster.existing``) on one made elsewhere, and the aliases
it gives its components when it was moved from a self-contained stack."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from tests.conftest import STACKS_ROOT
from tpu_serving.config.errors import ConfigError
from tpu_serving.config.platform_stack import load_platform_stack
from tpu_serving.platform import DEPLOYMENT_TYPE, moved_aliases, moved_subnet_aliases
from tpu_serving.platform_outputs import OUTPUT
from tpu_serving_tools.offline import Plan, main_program, run_program
from tpu_serving_tools.stack_files import config_map, load_project, stack_file_config

STACK = "platform-us-east5"
CREATE_ONLY = ("releaseChannel", "minMasterVersion", "maintenance")
"""The shipped platform's ``cluster`` keys that shape a cluster it creates."""


def on_existing_cluster(**cluster: Any) -> dict[str, Any]:
    """The shipped platform stack on a cluster reached by a kubeconfig, with every other cloud resource named
    existing (the APIs, the alert policies, the proxy-only subnet, the Gateway's address); ``cluster`` on top."""
    config = dict(stack_file_config(load_project(STACKS_ROOT), STACK))
    kept = {k: v for k, v in config["cluster"].items() if k not in CREATE_ONLY}
    config["cluster"] = {**kept, "existing": {"kubeconfig": "/srv/kube/config"}, **cluster}
    config["projectApis"] = "existing"
    config["observability"] = {**config["observability"], "cloudResources": "existing"}
    config["gateway"] = {
        **config["gateway"],
        "createProxyOnlySubnet": False,
        "existingAddress": "tpu-platform-gateway",
        "existingAddressIp": "192.0.2.10",
    }
    return config


def preview(config: dict[str, Any]) -> Plan:
    project = load_project(STACKS_ROOT)
    return run_program(main_program(project), config_map(project, config), project=project.name, stack=STACK)


def test_tpu_platform_on_an_existing_cluster_creates_no_cloud_resource_and_reaches_it_by_kubeconfig():
    plan = preview(on_existing_cluster())
    gcp = [r.type for r in plan.resources if r.type.startswith("gcp:")] + [t for t in plan.invokes if "gcp:" in t]
    assert gcp == []
    (cluster,) = [r for r in plan.resources if r.type == "tpu-serving:index:ExistingCluster"]
    assert cluster.inputs["kubeconfig"] == "/srv/kube/config"
    assert not [r for r in plan.resources if r.type == "tpu-serving:index:TpuCluster"]
    installs = [r for r in plan.resources if r.type == "tpu-serving:index:ControllerInstall"]
    assert len(installs) == 3  # LeaderWorkerSet, JobSet, the metrics adapter: still the platform's
    assert any(r.type == "kubernetes:gateway.networking.k8s.io/v1:Gateway" for r in plan.resources)
    platform = plan.outputs[OUTPUT]
    assert platform["clusterName"] == "tpu-platform"
    assert platform["owners"] == {"cloudNat": "existing", "proxyOnlySubnet": "existing"}


def test_tpu_platform_on_an_existing_cluster_refuses_the_keys_of_a_cluster_it_creates():
    project = load_project(STACKS_ROOT)
    values = config_map(project, on_existing_cluster(podsSecondaryRange="tpu-pods"))
    with pytest.raises(ConfigError) as err:
        load_platform_stack(values)
    assert any(
        p.startswith('tpu-serving:cluster.podsSecondaryRange = "tpu-pods": shapes a cluster')
        for p in err.value.problems
    )


def test_tpu_platform_installs_no_metrics_adapter_the_cluster_runs_already():
    """``sharedPlatform.metricsAdapterInstall: existing``: the adapter's install records the release and applies
    none of it; LeaderWorkerSet and JobSet are still the platform's."""
    config = on_existing_cluster()
    config["sharedPlatform"] = {**config["sharedPlatform"], "metricsAdapterInstall": "existing"}
    plan = preview(config)
    installs = {
        r.name: r.registered_outputs or {} for r in plan.resources if r.type == "tpu-serving:index:ControllerInstall"
    }
    assert {n: o.get("owned", True) for n, o in installs.items()} == {
        "tpu-platform-lws": True,
        "tpu-platform-jobset": True,
        "tpu-platform-metrics-adapter": False,
    }
    groups = [r for r in plan.resources if r.type == "kubernetes:yaml/v2:ConfigGroup"]
    assert len(groups) == 2
    assert [c["name"] for c in plan.outputs[OUTPUT]["controllers"]] == ["lws", "jobset", "metrics-adapter"]


def test_moved_aliases_name_the_self_contained_deployment_as_the_old_parent() -> None:
    assert moved_aliases(None) == []
    (alias,) = moved_aliases("vllm70bv6e")
    assert isinstance(alias, pulumi.Alias)
    assert isinstance(alias.parent, str)
    assert alias.parent.startswith("urn:pulumi:")
    assert alias.parent.endswith(f"::{DEPLOYMENT_TYPE}::vllm70bv6e")
    assert alias.name is ... and alias.type_ is ...  # the component keeps its own name and type


def test_moved_subnet_aliases_name_the_self_contained_gateways_subnet_by_its_urn() -> None:
    assert moved_subnet_aliases(None) == []
    (alias,) = moved_subnet_aliases("vllm70bv6e")
    serving_subnet = "tpu-serving:index:ServingGateway$gcp:compute/subnetwork:Subnetwork"
    assert alias.startswith("urn:pulumi:")
    assert alias.endswith(f"::{DEPLOYMENT_TYPE}${serving_subnet}::vllm70bv6e-gateway-proxy-only")


def test_tpu_platform_aliases_its_proxy_only_subnet_only_when_moved() -> None:
    config = dict(stack_file_config(load_project(STACKS_ROOT), STACK))
    moved = f"urn:pulumi:{STACK}::tpu-serving::{DEPLOYMENT_TYPE}$tpu-serving:index:ServingGateway$"
    expected = [{"urn": f"{moved}gcp:compute/subnetwork:Subnetwork::tpu-platform-gateway-proxy-only"}]
    for moved_from, aliases in [("tpu-platform", expected), (None, [])]:
        shared = {**config["sharedPlatform"], **({"movedFrom": moved_from} if moved_from else {})}
        (subnet,) = [
            r
            for r in preview({**config, "sharedPlatform": shared}).resources
            if r.type == "gcp:compute/subnetwork:Subnetwork"
        ]
        assert subnet.aliases == aliases, moved_from
