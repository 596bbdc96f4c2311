"""tpu_serving.config.checks: the stack file's checks that read more than one setting."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import SAX_CONFIG, VLLM, load, with_change
from tests.fixtures.configs import stack_problems as problems
from tpu_serving.config import ConfigError


def test_checks_inference_pool_version_gate_names_the_version():
    """config.checks.gateway_problems (mutmut_28): the refused minMasterVersion is quoted as the stack gives it."""
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:cluster"]["minMasterVersion"] = "1.30.1-gke.1"
    cfg["tpu-serving:gateway"] = {"inferencePool": True}
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any(
        p.startswith('tpu-serving:cluster.minMasterVersion = "1.30.1-gke.1": gateway.inferencePool needs GKE')
        for p in err.value.problems
    ), err.value.problems


# full_outage_problems: a stack whose every disruption is a full outage says so (serving.singleGroup; SRE review B2).


def _without_acknowledgement(base: dict) -> dict:
    cfg = copy.deepcopy(base)
    cfg["tpu-serving:serving"].pop("singleGroup")
    return cfg


def test_checks_full_outage_problems_refuse_one_group_without_a_spare_slice_unacknowledged():
    with pytest.raises(ConfigError) as exc:
        load(_without_acknowledgement(VLLM))
    assert str(exc.value).count("singleGroup") == 1
    assert (
        "tpu-serving:serving.singleGroup = null: the serving is one group (replicas 1) with no spare slice (rollout "
        "in-place), so a node failure, a repair, TPU host maintenance, a node upgrade or a rollout stops the whole "
        'service until the slice is back and the model has reloaded; set it to "accepted" to say so (valid: '
        "accepted); or set replicas to 2 with a slice each"
    ) in str(exc.value)


def test_checks_full_outage_problems_refuse_a_saxml_cell_unacknowledged():
    with pytest.raises(ConfigError, match=r"serving\.singleGroup = null: the Saxml cell is one JobSet"):
        load(_without_acknowledgement(SAX_CONFIG))


def test_checks_full_outage_problems_accept_the_acknowledgement_and_two_groups_without_it():
    assert load(VLLM).serving.single_group == "accepted"
    two = _without_acknowledgement(VLLM)
    two["tpu-serving:tpuSlices"][0]["count"] = 2
    two["tpu-serving:serving"]["replicas"] = 2
    assert load(two).serving.single_group is None


def test_checks_full_outage_problems_refuse_a_value_other_than_accepted():
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"]["singleGroup"] = "yes"
    with pytest.raises(ConfigError, match=r"tpu-serving:serving\.singleGroup.*'accepted'"):
        load(cfg)


@pytest.mark.parametrize("zone", ["us-east5-b", "us-west4", "us-west4-bb"])
def test_checks_zones_outside_the_region_are_refused_at_the_slice(zone):
    with pytest.raises(ConfigError) as err:
        load(with_change("tpu-serving:tpuSlices/0/zone", zone, VLLM))
    (problem,) = err.value.problems
    assert f"tpu-serving:tpuSlices[0].zone = \"{zone}\": not a zone of the region 'us-west4'" in problem
    assert problem.endswith("valid: us-west4-a, us-west4-b, us-west4-c")


@pytest.mark.parametrize("zone", ["us-west4-z", "us-west4-d"])
def test_checks_zones_a_letter_the_region_does_not_have_is_refused_with_its_zones(zone):
    # us-west4 has a, b and c (Google's regions and zones page, components/common/gcp_zones.py)
    for key in ("tpu-serving:zone", "tpu-serving:tpuSlices/0/zone"):
        with pytest.raises(ConfigError) as err:
            load(with_change(key, zone, VLLM))
        (problem,) = err.value.problems
        assert f"= \"{zone}\": not a zone of the region 'us-west4'" in problem
        assert problem.endswith("valid: us-west4-a, us-west4-b, us-west4-c")


def test_checks_zones_cpu_pool_spread_problem_counts_the_minimum_in_each_zone():
    from tpu_serving.config.checks import cpu_pool_spread_problem

    assert cpu_pool_spread_problem("k", 1, zones=3) == ""
    assert "valid: 2 or more" in cpu_pool_spread_problem("k", 1)
    assert "valid: 1 or more in each of its 3 zones" in cpu_pool_spread_problem("k", 0, zones=3)


# A control plane older than a slice's TPU generation needs is refused at preview, with GKE's minimum (issue "A
# platform team adopts it", item 9).


def test_checks_a_control_plane_older_than_the_tpu_generation_is_refused():
    old = with_change("tpu-serving:cluster/minMasterVersion", "1.30.5-gke.1000")
    (problem,) = [p for p in problems(old) if "minMasterVersion" in p]
    assert problem == (
        'tpu-serving:cluster.minMasterVersion = "1.30.5-gke.1000": tpuSlices[0] (v6e-16) needs GKE '
        "1.31.2-gke.1115000 or later for v6e node pools; set it to 1.31.2-gke.1115000 or later, or leave it unset "
        "on a release channel"
    )
    assert load(with_change("tpu-serving:cluster/minMasterVersion", "1.31.2-gke.1115000")).cluster.min_master_version
    assert load(with_change("tpu-serving:cluster/minMasterVersion", "1.31")).cluster.min_master_version  # any 1.31
    assert problems(with_change("tpu-serving:cluster/minMasterVersion", "1.31.1"))  # every 1.31.1 build is older


def test_checks_tpu7x_slices_need_gke_1_34_0_gke_2201000():
    """GKE "About Ironwood (TPU7x) in GKE": Standard clusters at 1.34.0-gke.2201000 and later."""
    tpu7x = with_change("tpu-serving:tpuSlices/0/slice", "tpu7x-16")
    tpu7x |= {"gcp:region": "us-central1", "tpu-serving:zone": "us-central1-c"}
    old = with_change("tpu-serving:cluster/minMasterVersion", "1.33", tpu7x)
    assert [p for p in problems(old) if "minMasterVersion" in p] == [
        'tpu-serving:cluster.minMasterVersion = "1.33": tpuSlices[0] (tpu7x-16) needs GKE 1.34.0-gke.2201000 or later '
        "for tpu7x node pools; set it to 1.34.0-gke.2201000 or later, or leave it unset on a release channel"
    ]
    assert load(with_change("tpu-serving:cluster/minMasterVersion", "1.34", tpu7x)).cluster.min_master_version
