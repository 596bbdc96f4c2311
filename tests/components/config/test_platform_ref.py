"""config.platform_ref: a model stack's `platform` key, and the refusal of what the platform owns beside it."""

import copy
import json

import pytest

from tests.conftest import ROOT
from tpu_serving.config import ConfigError, load_stack_config
from tpu_serving.config.platform_ref import STACK_REFERENCE
from tpu_serving_tools.preview.stack_files import load_project, stack_config

MODEL = "vllm-llama31-8b-platform"


def model_config(**edits: str) -> dict[str, str]:
    """The model stack's flat config map with ``edits`` (``tpu-serving:<key>`` -> JSON text)."""
    values = copy.deepcopy(stack_config(load_project(ROOT), MODEL))
    values.update({f"tpu-serving:{k}": v for k, v in edits.items()})
    return values


def problems(**edits: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_stack_config(model_config(**edits))
    return err.value.problems


def test_platform_ref_model_stack_loads():
    cfg = load_stack_config(model_config())
    assert cfg.platform is not None and cfg.platform.stack_name == "platform-us-east5"
    assert cfg.existing  # a shared cluster: controllers default to existing, PriorityClasses patched


def test_platform_ref_refuses_a_cloud_nat_beside_platform():
    assert problems(cluster='{"name": "llama8b", "cloudNat": "create"}') == [
        'tpu-serving:cluster.cloudNat = "create": the cluster\'s Cloud NAT is one per region and network, and the '
        "platform stack my-org/tpu-serving/platform-us-east5 (platform.stack) owns it; a model stack creates none: "
        "remove this key"
    ]


def test_platform_ref_refuses_a_proxy_only_subnet_beside_platform():
    found = problems(gateway='{"proxyOnlyCidr": "192.168.4.0/23", "createProxyOnlySubnet": true}')
    assert found == [
        "tpu-serving:gateway.createProxyOnlySubnet = true: the proxy-only subnet is one per region and network, and "
        "the platform stack my-org/tpu-serving/platform-us-east5 (platform.stack) owns it; a model stack creates "
        "none: remove this key"
    ]


def test_platform_ref_refuses_cluster_keys_and_controller_installs():
    found = problems(
        cluster='{"name": "llama8b", "network": "default", "existing": {"kubeconfig": "/k"}}',
        controllerInstalls='{"lws": "create"}',
    )
    assert any(p.startswith("tpu-serving:cluster.existing: the cluster is the platform stack's") for p in found)
    assert any(p.startswith("tpu-serving:cluster.network: shapes the platform's cluster") for p in found)
    assert any(
        p.startswith('tpu-serving:controllerInstalls.lws = "create": the cluster-wide controllers') for p in found
    )


def test_platform_ref_stack_must_be_fully_qualified():
    (found,) = problems(platform='{"stack": "platform-us-east5", "cluster": "tpu-platform"}')
    assert found.startswith('tpu-serving:platform.stack = "platform-us-east5": ')
    assert found.endswith(": must match the regular expression " + STACK_REFERENCE)


def test_platform_ref_refuses_a_metrics_adapter_install():
    values = model_config()
    serving = json.loads(values["tpu-serving:serving"])
    serving["autoscaling"] = {"minReplicas": 1, "maxReplicas": 1, "adapterInstall": "create"}
    found = problems(serving=json.dumps(serving))
    assert (
        'tpu-serving:serving.autoscaling.adapterInstall = "create": the Custom Metrics Stackdriver Adapter is one'
        in ("\n".join(found))
    )


def test_stack_config_project_apis_default_to_existing_on_a_model_stack():
    """GKE review m3: a model stack's APIs are its platform's, which enables them; it may still opt in, and a
    self-contained stack enables its own by default."""
    assert load_stack_config(model_config()).project_apis == "existing"
    assert load_stack_config(model_config(projectApis="create")).project_apis == "create"
    alone = {k: v for k, v in model_config().items() if k != "tpu-serving:platform"}
    alone["tpu-serving:cluster"] = json.dumps({**json.loads(alone["tpu-serving:cluster"]), "name": "alone"})
    assert load_stack_config(alone).project_apis == "create"


def test_platform_ref_refuses_a_metrics_adapter_grant():
    """GKE review m2: the adapter's grant is the platform stack's (sharedPlatform.metricsAdapterIam)."""
    values = model_config()
    serving = json.loads(values["tpu-serving:serving"])
    serving["autoscaling"] = {"minReplicas": 1, "maxReplicas": 1, "adapterIam": "create"}
    found = problems(serving=json.dumps(serving))
    assert any(p.startswith("tpu-serving:serving.autoscaling.adapterIam: the metrics adapter's") for p in found), found


def test_platform_ref_takes_a_kubeconfig_and_its_context():
    cfg = load_stack_config(
        model_config(
            platform='{"stack": "my-org/tpu-serving/platform-us-east5", "cluster": "tpu-platform", '
            '"kubeconfig": "~/.kube/platform", "context": "gw"}'
        )
    )
    assert cfg.platform is not None and (cfg.platform.kubeconfig, cfg.platform.context) == ("~/.kube/platform", "gw")


def test_platform_ref_refuses_a_context_without_a_kubeconfig_and_a_kubeconfig_the_provider_cannot_read():
    (alone,) = problems(platform='{"stack": "my-org/tpu-serving/platform-us-east5", "cluster": "tpu-platform", '
                        '"context": "gw"}')  # fmt: skip
    assert alone.startswith("tpu-serving:platform: ") and "set kubeconfig too" in alone
    (user,) = problems(platform='{"stack": "my-org/tpu-serving/platform-us-east5", "cluster": "tpu-platform", '
                       '"kubeconfig": "~ops/kube"}')  # fmt: skip
    assert user.startswith('tpu-serving:platform.kubeconfig = "~ops/kube": ') and "expands a leading ~/ only" in user


def test_platform_ref_takes_existing_node_pools_on_a_model_stack():
    tpu = '[{"name": "v6e4", "machineType": "ct6e-standard-4t", "topology": "2x2", "existingNodePools": ["team-v6e4"]}]'
    cfg = load_stack_config(model_config(tpuSlices=tpu))
    assert cfg.node_pool_names(cfg.tpu_slices[0]) == ("team-v6e4",)
