"""platform_outputs.PlatformOutputs: the `platform` stack output, one typed model for the platform stack that exports
it and the model stacks that read it."""

import pytest

from tests.conftest import plan_of
from tpu_serving.platform.platform_outputs import OUTPUT, PlatformOutputs


def test_platform_outputs_round_trip_through_the_platform_stack_output():
    """What the platform stack exports is read back by the model side into the same model, and written again the same
    (every field plain, known when the platform is planned)."""
    exported = plan_of("platform-us-east5").outputs[OUTPUT]
    read = PlatformOutputs.from_output(exported, "platform-us-east5")
    assert read.to_output() == exported
    assert read.cluster_name == "tpu-platform"
    assert read.control_plane.endpoint == "dns"
    assert read.control_plane.cluster_identifier == "projects/tpu-serving-demo/locations/us-east5/clusters/tpu-platform"
    assert read.node_service_account == "tpu-platform-nodes@tpu-serving-demo.iam.gserviceaccount.com"
    assert (read.gateway.namespace, read.gateway.name) == ("tpu-serving-gateway", "internal")
    assert {c.name: c.version for c in read.controllers} == {
        "lws": "v0.10.0",
        "jobset": "v0.12.0",
        "metrics-adapter": "v0.16.10",
    }
    assert (read.owners.cloud_nat, read.owners.proxy_only_subnet) == ("platform", "platform")
    assert "<unknown>" not in str(exported)


def test_platform_outputs_refuses_a_stack_without_the_output():
    with pytest.raises(ValueError, match=r"stack 'org/tpu-serving/x' exports no `platform` output"):
        PlatformOutputs.from_output(None, "org/tpu-serving/x")


def test_platform_outputs_refuses_another_shape_naming_the_field():
    exported = dict(plan_of("platform-us-east5").outputs[OUTPUT])
    del exported["nodeServiceAccount"]
    with pytest.raises(
        ValueError, match=r"its `platform` output is not a platform's: nodeServiceAccount: Field required"
    ):
        PlatformOutputs.from_output(exported, "org/tpu-serving/platform-us-east5")


def test_platform_outputs_carry_the_platform_cost_and_the_shares():
    read = PlatformOutputs.from_output(plan_of("platform-us-east5").outputs[OUTPUT], "platform-us-east5")
    assert read.cost.per_hour > 0 and read.cost.per_month == pytest.approx(read.cost.per_hour * 730, abs=0.01)
    assert read.cost.shares == {"vllm-llama33-70b-platform": 0.89, "vllm-llama31-8b-platform": 0.11}
    assert read.cost.unpriced == []
    exported = dict(plan_of("platform-us-east5").outputs[OUTPUT])
    del exported["cost"]
    with pytest.raises(ValueError, match=r"cost: Field required"):
        PlatformOutputs.from_output(exported, "org/tpu-serving/platform-us-east5")
