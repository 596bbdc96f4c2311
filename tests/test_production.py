"""config.production: what keeps a stack from a production SLO, refused with ``production: true`` and listed by the
preview's ``Production:`` line otherwise."""

import copy

import pytest

from tests.conftest import ROOT
from tests.fixtures.configs import GOOD, PATHWAYS_JOB, SERVING, VLLM, load, with_serving
from tools.preview import production_summary
from tpu_serving.backends.scaling import fewest_groups_gap
from tpu_serving.config import load_stack_config
from tpu_serving.config.errors import ConfigError
from tpu_serving.config.production import production_gaps, production_output
from tpu_serving_tools.offline import load_project, stack_config

CHANNEL = "projects/tpu-serving-demo/notificationChannels/123"


def _paged(data: dict) -> dict:
    """``data`` whose alert policies notify a channel, and which says nothing of ``production`` (its default)."""
    out = copy.deepcopy(data)
    out["tpu-serving:observability"] = {"notificationChannels": [CHANNEL]}
    out.pop("tpu-serving:production", None)
    return out


def _two_groups(data: dict, min_replicas: int = 2) -> dict:
    """``data`` (a vLLM stack) serving two slices with an HPA from ``min_replicas`` to two groups."""
    out = copy.deepcopy(data)
    out["tpu-serving:tpuSlices"][0]["count"] = 2
    serving = out["tpu-serving:serving"]
    serving.pop("singleGroup")
    serving["autoscaling"] = {"minReplicas": min_replicas, "maxReplicas": 2}
    return out


def _keys(data: dict) -> list[str]:
    """The gaps of ``data`` run as an example (``production: false``), as ``key = value``."""
    return [f"{g.key} = {g.value}" for g in production_gaps(load({**data, "tpu-serving:production": False}))]


def test_production_gaps_name_nobody_paged_and_one_group():
    assert _keys(SERVING) == ["observability.unpaged = true", "serving.singleGroup = accepted"]


def test_production_gaps_name_a_stack_without_alerts():
    data = copy.deepcopy(SERVING)
    data["tpu-serving:observability"] = {"enabled": False}
    assert _keys(data)[0] == "observability.enabled = false"


def test_production_gaps_none_for_two_paged_groups_and_none_without_serving():
    assert _keys(_two_groups(_paged(VLLM))) == []
    assert _keys(GOOD) == []


def test_production_gaps_name_a_minimum_of_one_group_of_several():
    assert _keys(_two_groups(_paged(VLLM), min_replicas=1)) == ["serving.autoscaling.minReplicas = 1"]


def _stack_keys(stack: str) -> list[str]:
    """The gaps of a shipped stack (each says ``production: false``), as ``key = value``."""
    return [f"{g.key} = {g.value}" for g in production_gaps(load_stack_config(stack_config(load_project(ROOT), stack)))]


def test_production_gaps_name_a_saxml_cell():
    assert _stack_keys("saxml-175b-v5e32x2") == ["observability.unpaged = true", "serving.singleGroup = accepted"]


@pytest.mark.parametrize(
    ("stack", "restarts"), [("pathwaysjob-batch-v6e16", "0"), ("pathwaysjob-interactive-v5e16", "3")]
)
def test_production_gaps_name_a_pathways_jobs_restarts(stack: str, restarts: str):
    assert _stack_keys(stack) == ["observability.unpaged = true", f"serving.maxRestarts = {restarts}"]
    assert _keys(with_serving(PATHWAYS_JOB, maxRestarts=1))[1] == "serving.maxRestarts = 1"


def test_production_gaps_name_the_disaggregated_modes_alpha_api_and_its_one_group_roles():
    assert _stack_keys("vllm-llama33-70b-disagg-v6e8x2")[1:] == [
        "serving.disaggregation = set",
        "serving.disaggregation.prefill.autoscaling.minReplicas = 1",
        "serving.disaggregation.decode.autoscaling.minReplicas = 1",
    ]


def test_fewest_groups_gap_only_for_a_minimum_of_one_of_several():
    serving = load({**_two_groups(_paged(VLLM), min_replicas=1), "tpu-serving:production": False}).serving
    gap = fewest_groups_gap(serving)
    assert gap is not None and (gap.key, gap.value) == ("serving.autoscaling.minReplicas", "1")
    assert fewest_groups_gap(load(_two_groups(_paged(VLLM))).serving) is None
    assert fewest_groups_gap(load(VLLM).serving) is None  # one group at most: singleGroup's case


def test_production_problems_refuse_each_gap_at_its_key_with_production_true():
    data = _paged(SERVING)
    data["tpu-serving:observability"] = {"unpaged": True}
    with pytest.raises(ConfigError) as err:
        load(data)
    problems = err.value.problems
    assert [p.split(":", 2)[1].split(" = ")[0] for p in problems] == ["observability.unpaged", "serving.singleGroup"]
    assert all("production: true refuses it" in p and "valid: true, false" in p for p in problems)


def test_production_problems_accept_a_paged_stack_of_two_groups_by_default():
    cfg = load(_two_groups(_paged(VLLM)))
    assert cfg.production is True


def test_production_output_lists_the_gaps_of_an_example():
    out = production_output(load(SERVING))
    assert out["production"] is False
    assert [g.split(":")[0] for g in out["gaps"]] == ["observability.unpaged true", "serving.singleGroup accepted"]


def test_production_summary_prints_the_gaps_of_an_example_and_a_yes_otherwise():
    lines = production_summary({"production": {"production": False, "gaps": ["a x: why", "b y: why"]}})
    assert lines == [
        "Production: no (production: false): 2 gap(s) keep it from a serving SLO",
        "  a x: why",
        "  b y: why",
    ]
    assert production_summary({"production": {"production": True, "gaps": []}})[0].startswith("Production: yes")
    assert production_summary({}) == []
