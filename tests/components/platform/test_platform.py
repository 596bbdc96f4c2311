"""platform: a platform stack on a cluster it creates or (``cluster.existing``) on one made elsewhere, and the aliases
it gives its components when it was moved from a self-contained stack."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from tests.conftest import STACKS_ROOT
from tests.fixtures.configs import preview_once
from tpu_serving.config.errors import ConfigError
from tpu_serving.config.platform_stack import load_platform_stack
from tpu_serving.platform.platform_outputs import OUTPUT
from tpu_serving.platform.tpu_platform import (
    DEPLOYMENT_TYPE,
    SERVICE_ACCOUNT_USER,
    moved_aliases,
    moved_subnet_aliases,
    platform_upgrades_held,
)
from tpu_serving_tools.preview.offline import Plan
from tpu_serving_tools.preview.stack_files import config_map, load_project, stack_file_config

STACK = "platform-us-east5"
CREATE_ONLY = ("releaseChannel", "minMasterVersion", "maintenance")
"""The shipped platform's ``cluster`` keys that shape a cluster it creates."""
NODES = "gke-tpu-nodes@cluster-owner-1.iam.gserviceaccount.com"
"""The node account an existing cluster's owner made, in another project."""
IAM_MEMBER = "gcp:serviceaccount/iAMMember:IAMMember"


def on_existing_cluster(**cluster: Any) -> dict[str, Any]:
    """The shipped platform stack on a cluster reached by a kubeconfig, with every other cloud resource named
    existing (the APIs, the alert policies, the proxy-only subnet, the Gateway's address); ``cluster`` on top."""
    config = dict(stack_file_config(load_project(STACKS_ROOT), STACK))
    kept = {k: v for k, v in config["cluster"].items() if k not in CREATE_ONLY}
    config["cluster"] = {**kept, "existing": {"kubeconfig": "/srv/kube/config", "nodeServiceAccount": NODES}, **cluster}
    config["sharedPlatform"] = {**config["sharedPlatform"], "modelDeployers": []}
    config["projectApis"] = "existing"
    config["sharedPlatform"] = {**config["sharedPlatform"], "metricsAdapterIam": "existing"}
    config["observability"] = {**config["observability"], "cloudResources": "existing"}
    config["gateway"] = {
        **config["gateway"],
        "createProxyOnlySubnet": False,
        "existingAddress": "tpu-platform-gateway",
        "existingAddressIp": "192.0.2.10",
    }
    return config


def preview(config: dict[str, Any]) -> Plan:
    return preview_once(config_map(load_project(STACKS_ROOT), config), STACK, STACKS_ROOT)


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


def test_tpu_platform_on_an_existing_cluster_exports_the_node_service_account_its_stack_file_names():
    """GKE review B3: the platform made no ``<cluster>-nodes`` account on a cluster made elsewhere, so the model
    stacks' TPU pools run as the account ``cluster.existing.nodeServiceAccount`` names."""
    plan = preview(on_existing_cluster())
    assert plan.outputs[OUTPUT]["nodeServiceAccount"] == NODES
    (cluster,) = plan.of_type("tpu-serving:index:ExistingCluster")
    assert cluster.inputs["nodeServiceAccount"] == NODES


def test_load_platform_stack_requires_the_node_service_account_of_an_existing_cluster():
    config = on_existing_cluster()
    del config["cluster"]["existing"]["nodeServiceAccount"]
    with pytest.raises(ConfigError) as err:
        load_platform_stack(config_map(load_project(STACKS_ROOT), config))
    assert err.value.problems == ["tpu-serving:cluster.existing.nodeServiceAccount: required key is missing"]


@pytest.mark.parametrize(
    "email",
    ["tpu-nodes@tpu-serving-demo.iam.gserviceaccount.com", "123456789012-compute@developer.gserviceaccount.com"],
)
def test_load_platform_stack_takes_a_user_managed_or_compute_default_node_service_account(email: str):
    config = on_existing_cluster()
    config["cluster"]["existing"]["nodeServiceAccount"] = email
    cfg = load_platform_stack(config_map(load_project(STACKS_ROOT), config))
    assert cfg.cluster.existing is not None and cfg.cluster.existing.node_service_account == email


@pytest.mark.parametrize(
    "email",
    ["tpu-nodes", "ml-team@example.com", "tpu@p-1.iam.gserviceaccount.com", "Nodes@proj-1.iam.gserviceaccount.com"],
)
def test_load_platform_stack_refuses_a_node_service_account_not_shaped_as_gcp_names_them(email: str):
    config = on_existing_cluster()
    config["cluster"]["existing"]["nodeServiceAccount"] = email
    with pytest.raises(ConfigError) as err:
        load_platform_stack(config_map(load_project(STACKS_ROOT), config))
    (problem,) = err.value.problems
    assert problem.startswith(f"tpu-serving:cluster.existing.nodeServiceAccount = {email!r}".replace("'", '"'))
    assert "<account id>@<project id>.iam.gserviceaccount.com" in problem


def test_tpu_platform_grants_each_model_deployer_the_use_of_the_node_service_account_it_creates():
    """GKE review M2: a model stack's deployer acts as the node account to create pools running as it."""
    plan = preview(dict(stack_file_config(load_project(STACKS_ROOT), STACK)))
    (grant,) = plan.of_type(IAM_MEMBER)
    (platform,) = plan.of_type("tpu-serving:index:TpuPlatform")
    (account,) = [
        r for r in plan.of_type("gcp:serviceaccount/account:Account") if r.inputs["accountId"].endswith("-nodes")
    ]
    assert grant.name == "tpu-platform-deployer-group-ml-team@example.com"
    assert grant.parent == platform.urn
    assert grant.inputs["role"] == SERVICE_ACCOUNT_USER == "roles/iam.serviceAccountUser"
    assert grant.inputs["member"] == "group:ml-team@example.com"
    assert grant.property_dependencies["serviceAccountId"] == [account.urn]
    assert plan.outputs["modelDeployers"] == {
        "serviceAccount": "tpu-platform-nodes@tpu-serving-demo.iam.gserviceaccount.com",
        "role": "roles/iam.serviceAccountUser",
        "members": ["group:ml-team@example.com"],
    }


def test_tpu_platform_on_an_existing_cluster_grants_the_model_deployers_the_use_of_the_named_account():
    config = on_existing_cluster()
    members = ["user:alice@example.com", "serviceAccount:deployer@ci-1234.iam.gserviceaccount.com"]
    config["sharedPlatform"]["modelDeployers"] = members
    plan = preview(config)
    grants = plan.of_type(IAM_MEMBER)
    assert sorted(g.inputs["member"] for g in grants) == sorted(members)
    assert {g.inputs["serviceAccountId"] for g in grants} == {f"projects/cluster-owner-1/serviceAccounts/{NODES}"}


def test_tpu_platform_says_when_no_model_deployer_may_use_the_node_service_account():
    plan = preview(on_existing_cluster())
    assert plan.of_type(IAM_MEMBER) == []
    note = plan.outputs["modelDeployers"]["note"]
    assert note.startswith("nobody: ") and NODES in note and "sharedPlatform.modelDeployers" in note


@pytest.mark.parametrize(
    "member",
    [
        "ml-team@example.com",
        "allUsers",
        "allAuthenticatedUsers",
        "group:",
        "team:ml@example.com",
        "domain:not a domain",
    ],
)
def test_load_platform_stack_refuses_a_model_deployer_iam_does_not_take(member: str):
    config = on_existing_cluster()
    config["sharedPlatform"]["modelDeployers"] = [member]
    with pytest.raises(ConfigError) as err:
        load_platform_stack(config_map(load_project(STACKS_ROOT), config))
    (problem,) = err.value.problems
    assert problem.startswith("tpu-serving:sharedPlatform.modelDeployers[0] = ")
    assert "must be an IAM member: user:<email>, group:<email>" in problem


@pytest.mark.parametrize(
    "member",
    [
        "domain:example.com",
        "principalSet://iam.googleapis.com/locations/global/workforcePools/ml/group/deployers",
        "principal://iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/gh/subject/repo",
    ],
)
def test_load_platform_stack_takes_a_domain_or_federated_model_deployer(member: str):
    config = on_existing_cluster()
    config["sharedPlatform"]["modelDeployers"] = [member]
    cfg = load_platform_stack(config_map(load_project(STACKS_ROOT), config))
    assert cfg.shared_platform.model_deployers == [member]


def test_load_platform_stack_refuses_a_model_deployer_named_twice():
    config = on_existing_cluster()
    config["sharedPlatform"]["modelDeployers"] = ["group:ml@example.com", "group:ml@example.com"]
    with pytest.raises(ConfigError) as err:
        load_platform_stack(config_map(load_project(STACKS_ROOT), config))
    assert "group:ml@example.com: named more than once" in err.value.problems[0]


def test_platform_upgrades_held_by_a_holding_exclusion_or_the_existing_clusters_word():
    """GKE review M1: the ``platform`` output says whether the platform's cluster holds node upgrades back, judged as
    a self-contained stack's is."""
    project = load_project(STACKS_ROOT)
    shipped = dict(stack_file_config(project, STACK))
    assert platform_upgrades_held(load_platform_stack(config_map(project, shipped)))
    unheld = {**shipped, "cluster": {**shipped["cluster"], "maintenance": {}}}
    assert not platform_upgrades_held(load_platform_stack(config_map(project, unheld)))
    assert preview(on_existing_cluster()).outputs[OUTPUT]["nodeUpgradesHeld"] is False
    existing = on_existing_cluster()
    existing["cluster"]["existing"]["nodeUpgradesHeld"] = True
    assert preview(existing).outputs[OUTPUT]["nodeUpgradesHeld"] is True


def test_tpu_platform_grants_the_metrics_adapter_it_installs_monitoring_viewer():
    """GKE review m2: the adapter's roles/monitoring.viewer grant is the platform's, as the adapter is; made only when
    the platform installs the adapter and does not name the grant existing."""
    viewer = "gcp:projects/iAMMember:IAMMember"

    def grants(config: dict[str, Any]) -> list[Any]:
        return [r for r in preview(config).resources if r.type == viewer and r.name.endswith("-adapter-viewer")]

    (grant,) = grants(dict(stack_file_config(load_project(STACKS_ROOT), STACK)))
    assert grant.inputs["role"] == "roles/monitoring.viewer"
    for key, value in (("metricsAdapterInstall", "existing"), ("metricsAdapterIam", "existing")):
        config = on_existing_cluster()
        config["sharedPlatform"] = {**config["sharedPlatform"], "metricsAdapterIam": "create", key: value}
        assert grants(config) == []


def test_tpu_platform_protects_every_resource_unless_its_file_says_protect_false():
    """SRE review: a platform destroy deleted what the model stacks run on. Providers are the engine's to remake."""
    config = dict(stack_file_config(load_project(STACKS_ROOT), STACK))
    for protect in (True, False):
        shared = {**config["sharedPlatform"], **({} if protect else {"protect": False})}
        resources = [
            r for r in preview({**config, "sharedPlatform": shared}).resources if not r.type.startswith("pulumi:")
        ]
        assert len(resources) >= 20, len(resources)
        kinds = {r.type for r in resources}
        assert {"gcp:container/cluster:Cluster", "tpu-serving:index:ControllerInstall"} <= kinds
        assert {r.name for r in resources if r.protect != protect} == set(), protect
