"""platform_cost: the platform stack's own cost estimate, shown once, and each model stack's share of it."""

import pytest
from pydantic import ValidationError

from tests.conftest import plan_of
from tpu_serving.catalog.prices import GKE_CLUSTER_HOUR, HOURS_PER_MONTH
from tpu_serving.config.platform_stack import SharedPlatformConfig
from tpu_serving.cost.platform_cost import platform_cost, platform_estimate, share_output
from tpu_serving.platform.platform_outputs import OUTPUT, PlatformOutputs
from tpu_serving_tools.preview.cost_summary import cost_summary


def test_platform_cost_counts_the_fee_the_cpu_pool_minimum_and_disks():
    estimate = platform_estimate("e2-standard-4", 1, 100, ["us-east5-a", "us-east5-b"])
    assert estimate.per_hour("cluster") == pytest.approx(GKE_CLUSTER_HOUR.usd)
    assert estimate.per_hour("tpu") == 0
    # one node in each of two zones: two lines, both priced
    assert [x.what for x in estimate.lines if x.part == "cpu"] == [
        "cpu pool (minimum): 1 x e2-standard-4",
        "cpu pool (minimum, 1 more zone: us-east5-b): 1 x e2-standard-4",
    ]
    one_zone = platform_estimate("e2-standard-4", 1, 100, ["us-east5-a"])
    assert estimate.per_hour("cpu") == pytest.approx(2 * one_zone.per_hour("cpu"))
    assert estimate.per_hour("storage") == pytest.approx(0.10 * 200 / HOURS_PER_MONTH)


def test_platform_cost_lists_an_unpriced_machine_and_never_guesses():
    estimate = platform_estimate("z9-weird-4", 1, 100, ["us-east5-a"])
    out = platform_cost(estimate, {})
    assert out.unpriced == ["cpu pool (minimum): 1 x z9-weird-4"]
    assert out.per_hour == pytest.approx(GKE_CLUSTER_HOUR.usd + 0.10 * 100 / HOURS_PER_MONTH, abs=1e-4)  # fee, disk


def test_platform_cost_the_platform_stack_shows_its_cost_once_and_model_stacks_not_the_fee():
    platform = plan_of("platform-us-east5").outputs
    assert platform["cost"]["perHour"]["cluster"] == pytest.approx(GKE_CLUSTER_HOUR.usd)
    assert platform["cost"]["perHour"]["cpu"] > 0
    assert platform[OUTPUT]["cost"]["perHour"] == pytest.approx(platform["cost"]["perHour"]["total"], abs=0.01)
    for model in ("vllm-llama33-70b-platform", "vllm-llama31-8b-platform"):
        own = plan_of(model).outputs["cost"]
        assert own["perHour"]["cluster"] == 0 and own["perHour"]["cpu"] == 0, model


def test_platform_cost_model_stacks_shares_come_from_the_platform_and_sum_to_at_most_it():
    platform_hour = plan_of("platform-us-east5").outputs[OUTPUT]["cost"]["perHour"]
    shares = {}
    for model in ("vllm-llama33-70b-platform", "vllm-llama31-8b-platform"):
        c = plan_of(model).outputs["cost"]
        share = c["platformShare"]
        assert share["perHour"] == pytest.approx(platform_hour * share["fraction"], abs=0.01)
        assert f"sharedPlatform.costShares.{model}" in share["rule"]
        assert share["withShare"]["perHour"] == pytest.approx(c["perHour"]["total"] + share["perHour"], abs=0.01)
        shares[model] = share["fraction"]
    assert shares == {"vllm-llama33-70b-platform": 0.89, "vllm-llama31-8b-platform": 0.11}


def test_platform_cost_a_stack_the_platform_does_not_name_bears_none_and_says_so():
    platform = PlatformOutputs.from_output(plan_of("platform-us-east5").outputs[OUTPUT], "platform-us-east5")
    out = share_output(platform, "someone-else", 10.0)
    assert (out["fraction"], out["perHour"]) == (0.0, 0.0)
    assert "does not name someone-else" in str(out["rule"])
    assert out["withShare"] == {"perHour": 10.0, "perMonth": 10.0 * HOURS_PER_MONTH}


def test_platform_cost_shares_are_bounded_and_sum_to_at_most_one():
    assert SharedPlatformConfig.model_validate({"costShares": {"a": 0.5, "b": 0.5}}).cost_shares == {"a": 0.5, "b": 0.5}
    with pytest.raises(ValidationError, match="add up to 1.2"):
        SharedPlatformConfig.model_validate({"costShares": {"a": 0.6, "b": 0.6}})
    for bad in (0, -0.1, 1.5):
        with pytest.raises(ValidationError):
            SharedPlatformConfig.model_validate({"costShares": {"a": bad}})
    assert SharedPlatformConfig.model_validate({}).cost_shares == {}


def test_platform_cost_the_preview_prints_the_share_and_its_rule():
    lines = cost_summary(plan_of("vllm-llama31-8b-platform").outputs)
    (share,) = [x for x in lines if x.startswith("  platform share:")]
    assert "of the platform's $" in share
    assert any(x.startswith("    rule: 0.11 of the platform's cost") for x in lines)
    assert any(x.startswith("  with the platform share:") for x in lines)
    assert not any("platform share" in x for x in cost_summary(plan_of("platform-us-east5").outputs))
