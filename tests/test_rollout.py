"""Rollouts of serving groups by whole slices: ``serving.rollout`` (in-place or surge), the LeaderWorkerSet's
rolloutStrategy, the spare slice and what a diff of an engine bump says (``make e2e`` rolls each LeaderWorkerSet
stack for real: tests/test_e2e_image_rollout.py)."""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import VLLM, load
from tpu_serving.backends import rollout
from tpu_serving.backends.rollout import CONTAINER_RESTART, RolloutPlan
from tpu_serving.config import ConfigError
from tpu_serving.derived import scale_from_zero
from tpu_serving.lws import Rollout
from tpu_serving.versions import PINS
from tpu_serving_tools.diff import diff_plans, render_markdown
from tpu_serving_tools.offline import kubernetes_objects

SURGE = "vllm-llama33-70b-v5e16"
"""The shipped stack that rolls with surge: two groups on v5e16 and v5e16b, spare slice v5e16s."""
IN_PLACE = "llama31-405b-v6e16"
"""One JetStream group on one slice, rolled in place."""


def lws_of(stack: str) -> dict:
    (lws,) = [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == "LeaderWorkerSet"]
    return lws


def vllm(**serving: object) -> dict:
    """The VLLM fixture on ``slices`` v5e16 slices (named s0, s1, ...) with serving keys changed."""
    cfg = copy.deepcopy(VLLM)
    count = int(serving.pop("pools", 1))  # type: ignore[call-overload]
    cfg["tpu-serving:tpuSlices"] = [{"name": f"s{i}", "slice": "v5litepod-16", "diskSizeGb": 300} for i in range(count)]
    cfg["tpu-serving:serving"].update(slices=[f"s{i}" for i in range(count)], **serving)
    return cfg


def problems(cfg: dict) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load(cfg)
    return [p for p in err.value.problems if p.startswith("tpu-serving:serving")]


# --------------------------------------------------------------------------- settings


def test_rollout_defaults_to_in_place_with_the_lws_webhook_defaults():
    lws = lws_of(IN_PLACE)
    assert lws["spec"]["rolloutStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0},
    }


def test_rollout_surge_adds_one_group_and_keeps_every_group_serving():
    lws = lws_of(SURGE)
    assert lws["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {"maxUnavailable": 0, "maxSurge": 1}


def test_rollout_surge_without_a_spare_slice_is_refused_naming_the_key_and_the_way_out():
    (problem,) = problems(vllm(pools=2, replicas=2, rollout="surge"))
    assert problem == (
        'tpu-serving:serving.rollout = "surge": each group and the surge group take 1 whole slice(s), so 2 group(s) '
        "of replicas need 3 serving slices; serving.slices provide 2 (s0, s1). List 3, or set replicas to 1, or use "
        'rollout "in-place"'
    )
    # one slice too many is not "add slices": the message gives the count, or the replicas that fit
    (extra,) = problems(vllm(pools=6, replicas=2, rollout="surge"))
    assert "need 3 serving slices; serving.slices provide 6" in extra and "set replicas to 5" in extra


def test_rollout_surge_of_groups_over_several_slices_names_the_multiples():
    from tests.fixtures.configs import SERVING

    cfg = copy.deepcopy(SERVING)
    cfg["tpu-serving:tpuSlices"][0]["count"] = 4
    cfg["tpu-serving:serving"].update(replicas=1, rollout="surge")
    assert load(cfg).serving.rollout == Rollout.SURGE  # 4 slices: the group's two and the surge group's two
    cfg["tpu-serving:tpuSlices"][0]["count"] = 5
    (problem,) = problems(cfg)
    assert "serving.slices provide 5" in problem and "not a multiple of 2. List 4 or 6 slices" in problem


def test_rollout_surge_with_one_spare_slice_is_accepted_and_the_spare_scales_from_zero():
    cfg = load(vllm(pools=3, replicas=2, rollout="surge"))
    assert cfg.serving.rollout == Rollout.SURGE
    assert scale_from_zero(cfg) == {"s2"}
    # in place, the same three slices would be one too many for two groups
    (problem,) = problems(vllm(pools=3, replicas=2))
    assert problem.startswith("tpu-serving:serving.replicas = 2:") and "serving.slices provide 3" in problem


def test_rollout_surge_with_autoscaling_leaves_the_spare_out_of_the_hpa_maximum():
    cfg = load(vllm(pools=3, rollout="surge", autoscaling={"minReplicas": 1, "maxReplicas": 2}))
    assert scale_from_zero(cfg) == {"s1", "s2"}
    (problem,) = problems(vllm(pools=3, rollout="surge", autoscaling={"minReplicas": 1, "maxReplicas": 3}))
    assert "3 group(s) of autoscaling.maxReplicas need 4 serving slices; serving.slices provide 3" in problem


def test_rollout_unknown_value_names_the_choices():
    (problem,) = problems(vllm(rollout="blue-green"))
    assert "tpu-serving:serving.rollout" in problem and "'in-place'" in problem and "'surge'" in problem


# --------------------------------------------------------------------------- the plan's rollout output


def test_rollout_output_of_the_surge_stack_names_the_spare_slice_and_its_time():
    out = plan_of(SURGE).as_json()["outputs"]["rollout"]
    assert out["strategy"] == "surge" and out["groups"] == 2 and out["sparePools"] == ["vllm70b-v5e16s"]
    # 3600 s startup window (probes.maxStartupSeconds default) -> 60 minutes per group, three groups' starts
    assert out["startupMinutes"] == 60
    assert "no serving capacity lost" in out["summary"] and "about 180 minutes" in out["summary"]


def test_rollout_summary_of_one_group_in_place_says_the_service_stops():
    one = RolloutPlan(
        Rollout.IN_PLACE, groups=1, autoscaled=False, fewest=1, slices_per_group=1, startup_minutes=182, spare_pools=()
    )
    assert one.summary.startswith("rolling update of the only group, in place: the service stops for up to about 182")
    two = RolloutPlan(
        Rollout.IN_PLACE, groups=2, autoscaled=True, fewest=1, slices_per_group=2, startup_minutes=30, spare_pools=()
    )
    assert two.summary == (
        "rolling update of up to 2 groups, 2 slices at a time, in place: about 30 minutes of 2 slices' capacity "
        "lost per group (its startup window), up to 60 minutes in all; at 1 group (the minimum) the service "
        "stops meanwhile"
    )


# --------------------------------------------------------------------------- diff of an engine bump


def test_rollout_diff_of_an_engine_bump_says_how_the_groups_roll():
    # An engine bump comes with a release of the package (a stack's image must be the pinned release): the base
    # is the stack as a release pinning vLLM TPU v0.21.0 rendered it, the head the stack as it is now.
    head = plan_of(SURGE).as_json()
    pinned = PINS["vllm-tpu"].value
    base = json.loads(json.dumps(head).replace(pinned, pinned.replace(PINS["vllm-tpu"].version, "v0.21.0")))
    assert base != head
    diff = diff_plans(SURGE, base, head)
    (line,) = diff.rollouts
    assert line.startswith("LeaderWorkerSet `vllm`: rolling update of up to 2 groups, one slice at a time, with surge")
    assert f"**Rollout:** {line}" in render_markdown(diff, "main").splitlines()


def test_rollout_diff_of_a_change_outside_the_groups_says_nothing():
    base = plan_of(SURGE).as_json()
    head = json.loads(json.dumps(base))
    lws = next(r for r in head["resources"] if r["inputs"].get("kind") == "LeaderWorkerSet")
    lws["inputs"]["metadata"].setdefault("labels", {})["team"] = "a"
    assert diff_plans(SURGE, base, head).rollouts == []


def test_rollout_spare_slice_is_not_counted_as_needed():
    capacity = plan_of(SURGE).outputs["capacity"]
    # three v5e-16 slices, of which two hold groups; the model fits one each
    assert (capacity["chips"], capacity["servingSlices"], capacity["chipsNeeded"]) == (48, 2, 32)
    assert capacity["allocatedToNeeded"] == pytest.approx(1.5)


# --------------------------------------------------------------------------- drains under the groups' budget


def test_rollout_drain_says_what_a_drain_leaves_serving():
    def plan(groups: int, fewest: int) -> RolloutPlan:
        return RolloutPlan(
            Rollout.IN_PLACE, groups, groups > fewest, fewest, slices_per_group=1, startup_minutes=60, spare_pools=()
        )

    budget = (
        "a node drain or upgrade takes one group at a time (disruption budget: one eviction, then none until the "
        "group serves again)"
    )
    restart = f"; {CONTAINER_RESTART}"
    assert (
        plan(1, 1).drain
        == f"{budget}; with one group, a drain stops the service until its slice is back and it has loaded{restart}"
    )
    assert plan(2, 1).drain == f"{budget}; at 1 group (the minimum) a drain stops the service meanwhile{restart}"
    assert plan(3, 3).drain == f"{budget}; 2 of 3 groups at least keep serving{restart}"


def test_rollout_every_leaderworkerset_has_a_budget_of_one_group():
    for stack in (SURGE, IN_PLACE):
        lws = lws_of(stack)
        (pdb,) = [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == "PodDisruptionBudget"]
        assert pdb["metadata"]["namespace"] == lws["metadata"]["namespace"]
        assert pdb["spec"] == {
            "selector": {"matchLabels": {"leaderworkerset.sigs.k8s.io/name": lws["metadata"]["name"]}},
            "maxUnavailable": 1,
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        }
        assert plan_of(stack).as_json()["outputs"]["rollout"]["drain"].startswith("a node drain or upgrade takes one")


# --------------------------------------------------------------------------- GKE's node upgrades


def test_rollout_upgrade_says_when_upgrades_come_and_what_one_costs():
    def plan(groups: int, fewest: int, minutes: int, channel: str | None = "RAPID", held: bool = False) -> str:
        return RolloutPlan(
            Rollout.IN_PLACE,
            groups,
            groups > fewest,
            fewest,
            1,
            minutes,
            (),
            channel,
            "FREQ=DAILY 02:00-08:00 UTC",
            held,
        ).upgrade

    when = "GKE upgrades the nodes on the RAPID channel in the window FREQ=DAILY 02:00-08:00 UTC"
    cost = "each upgrade recreates a slice's VMs and its group reloads for up to about"
    exclusion = (
        "; a maintenance exclusion of scope NO_MINOR_OR_NODE_UPGRADES (cluster.maintenance.exclusions) lets you "
        "choose when"
    )
    assert plan(1, 1, 182) == f"{when}; {cost} 182 minutes: with one group, the service stops meanwhile{exclusion}"
    assert plan(1, 1, 182, held=True) == (
        f"{when}, now held back by a maintenance exclusion; {cost} 182 minutes: with one group, the service stops "
        "meanwhile"
    )
    owner = "node upgrades come on the existing cluster's channel and maintenance window (its owner's)"
    assert plan(1, 1, 30, channel=None) == f"{owner}; {cost} 30 minutes: with one group, the service stops meanwhile"
    # the budget holds the next slice's drain only as long as GKE waits on it: an hour
    assert plan(3, 3, 59) == (
        f"{when}; {cost} 59 minutes; the disruption budget holds the next slice's drain until it serves again"
    )
    assert plan(2, 1, 45).endswith("until it serves again; at 1 group (the minimum) the service stops meanwhile")
    assert plan(2, 2, 60) == (
        f"{when}; {cost} 60 minutes, no less than the 60 minutes GKE waits on the disruption budget: the next "
        "slice's upgrade can then take a second group down while the first still reloads"
    )


def test_rollout_upgrade_reads_the_cluster_channel_window_and_exclusions():
    out = plan_of(IN_PLACE).as_json()["outputs"]["rollout"]
    assert out["upgrade"].startswith(
        "GKE upgrades the nodes on the RAPID channel in the window FREQ=WEEKLY;BYDAY=SA,SU 02:00-08:00 UTC; "
    )
    assert "reloads for up to about 182 minutes: with one group" in out["upgrade"]
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:cluster"] = {
        **cfg.get("tpu-serving:cluster", {}),
        "releaseChannel": "STABLE",
        "maintenance": {
            "windowStart": "2026-01-05T10:00:00Z",
            "windowEnd": "2026-01-05T22:00:00Z",
            "recurrence": "FREQ=DAILY",
            "exclusions": [{"name": "freeze", "startTime": "2026-12-01T00:00:00Z"}],
        },
    }
    stack = load(cfg)
    plan = rollout.plan(stack, stack.serving, 3600)
    assert plan.channel == "STABLE" and plan.window == "FREQ=DAILY 10:00-22:00 UTC" and plan.node_upgrades_held
    assert plan.upgrade.startswith(
        "GKE upgrades the nodes on the STABLE channel in the window FREQ=DAILY 10:00-22:00 UTC, now held back"
    )


def test_rollout_summary_lines_of_the_preview_print_the_upgrade_line():
    from tpu_serving_tools.preview import rollout_summary

    outputs = plan_of(IN_PLACE).as_json()["outputs"]
    lines = rollout_summary(outputs)
    assert [line.split(":", 1)[0] for line in lines] == ["Rollout", "Drain", "Upgrades"]
    assert lines[2] == f"Upgrades: {outputs['rollout']['upgrade']}"
