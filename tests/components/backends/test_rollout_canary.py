"""tpu_serving.backends.rollout's canary rollouts (``serving.canaryGroups``): the LeaderWorkerSet's ``partition``, the
refusals, the preview's ``Rollout:`` line, and the component arguments (``make e2e``'s real LWS controller:
tests/e2e/test_e2e_canary_rollout.py)."""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import STACKS_ROOT
from tests.fixtures.configs import PATHWAYS_JOB, SAX_CONFIG, SERVING, VLLM, load, preview_once
from tpu_serving import catalog
from tpu_serving.config import ConfigError
from tpu_serving.platform import lws
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.stack import rollout_summary
from tpu_serving_tools.preview.stack_files import load_project, stack_config

FLAGSHIP = "vllm-llama33-70b-v5e16"
"""Two to three vLLM groups (autoscaling.minReplicas 2), rolled with surge."""


def flagship(**serving: object):
    """The flagship stack's plan with serving keys changed."""
    project = load_project(STACKS_ROOT)
    cfg = dict(stack_config(project, FLAGSHIP))
    cfg["tpu-serving:serving"] = json.dumps({**json.loads(cfg["tpu-serving:serving"]), **serving})
    return preview_once(cfg, FLAGSHIP, STACKS_ROOT)


def problems(cfg: dict, **serving: object) -> list[str]:
    cfg = copy.deepcopy(cfg)
    cfg["tpu-serving:serving"].update(serving)
    with pytest.raises(ConfigError) as err:
        load(cfg)
    return [p for p in err.value.problems if "canaryGroups" in p]


def test_canary_partition_holds_the_groups_below_the_canary():
    assert lws.canary_partition(2, 1) == 1
    assert lws.canary_partition(5, 2) == 3
    assert lws.canary_partition(2, None) is None


def test_canary_renders_the_partition_of_the_hpa_minimum_and_unset_renders_none():
    (held,) = [o for o in kubernetes_objects(flagship(canaryGroups=1)) if o["kind"] == "LeaderWorkerSet"]
    assert held["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {
        "maxUnavailable": 0,
        "maxSurge": 1,
        "partition": 1,
    }
    (plain,) = [o for o in kubernetes_objects(flagship()) if o["kind"] == "LeaderWorkerSet"]
    assert "partition" not in plain["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]


def test_canary_rollout_line_says_which_groups_move_which_wait_and_how_to_release():
    plan = flagship(canaryGroups=1)
    (line,) = [x for x in rollout_summary(plan.outputs) if x.startswith("Rollout: ")]
    assert "canary (serving.canaryGroups 1, partition 1)" in line
    assert "only group 1 (at 2 groups, the minimum) and every group of a higher index the HPA runs or adds" in line
    assert "the surge group starts on it as well and stays on its spare slice until the release" in line
    assert "group 0 waits on the old one" in line
    assert "remove canaryGroups and run `pulumi up`" in line and "docs/upgrade.md" in line
    assert plan.outputs["rollout"]["partition"] == 1 and plan.outputs["rollout"]["canaryGroups"] == 1
    assert "canary" not in " ".join(rollout_summary(flagship().outputs))


def test_canary_holding_no_group_is_refused_with_the_key_the_value_and_the_range():
    assert problems(VLLM, canaryGroups=1) == [
        "tpu-serving:serving.canaryGroups = 1: a canary needs two groups at least, one to roll and one to hold, "
        "and replicas is 1; remove canaryGroups"
    ]
    many = copy.deepcopy(VLLM)
    many["tpu-serving:tpuSlices"] = [{"name": f"s{i}", "slice": "v5litepod-16", "diskSizeGb": 300} for i in range(3)]
    many["tpu-serving:serving"].update(slices=["s0", "s1", "s2"], replicas=3)
    assert problems(many, canaryGroups=3) == [
        "tpu-serving:serving.canaryGroups = 3: holds no group of the 3 of replicas: every group would roll; "
        "valid: 1 to 2, or remove canaryGroups"
    ]
    assert problems(many, canaryGroups=0) == ["tpu-serving:serving.canaryGroups = 0: must be from 1 to 63"]
    many["tpu-serving:serving"]["canaryGroups"] = 2
    assert load(many).serving.canary_groups == 2  # type: ignore[union-attr]


def test_canary_is_reported_at_once_with_other_problems():
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"].update(canaryGroups=1, serviceName=cfg["tpu-serving:serving"].get("name", "vllm"))
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any("canaryGroups = 1" in p for p in err.value.problems)
    assert any("serviceName" in p for p in err.value.problems)


def test_canary_of_one_jetstream_group_is_refused():
    (found,) = problems(SERVING, canaryGroups=1)
    assert found.startswith("tpu-serving:serving.canaryGroups = 1: a canary needs two groups at least")


@pytest.mark.parametrize(
    ("cfg", "runs"),
    [(SAX_CONFIG, "backend saxml runs a JobSet"), (PATHWAYS_JOB, "backend pathways-job runs a PathwaysJob")],
)
def test_canary_of_a_backend_without_a_leaderworkerset_says_why(cfg: dict, runs: str):
    (found,) = problems(cfg, canaryGroups=1)
    assert found.startswith(f"tpu-serving:serving.canaryGroups = 1: {runs}")
    assert "no rolling-update partition" in found and "remove canaryGroups" in found


def test_canary_of_a_disaggregated_set_says_why():
    project = load_project(STACKS_ROOT)
    cfg = dict(stack_config(project, "vllm-llama33-70b-disagg-v6e8x2"))
    cfg["tpu-serving:serving"] = json.dumps({**json.loads(cfg["tpu-serving:serving"]), "canaryGroups": 1})
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert err.value.problems == [
        "tpu-serving:serving.canaryGroups = 1: a disaggregated serving is a DisaggregatedSet, which rolls out "
        "across its roles itself and refuses a role's partition; remove canaryGroups"
    ]


def test_canary_of_the_component_arguments_is_checked_against_replicas():
    from tpu_serving.backends.vllm.args import VllmServingArgs
    from tpu_serving.catalog.models import Attention, ModelSize, WeightPrecision

    base = dict(
        namespace="ns",
        service_account="sa",
        shape=catalog.resolve_slice_name("v5litepod-16"),
        model="m",
        served_model_name="x",
        model_size=ModelSize(8, WeightPrecision.BF16, Attention(layers=32, kv_heads=8, head_dim=128)),  # "x": unknown
        weights_bucket="b",
    )
    assert VllmServingArgs(**base, replicas=3, canary_groups=1).problems() == []  # type: ignore[arg-type]
    assert VllmServingArgs(**base, replicas=2, canary_groups=2).problems() == [  # type: ignore[arg-type]
        "canary_groups = 2: holds no group of the 2 of replicas: every group would roll; valid: 1, "
        "or remove canaryGroups"
    ]
