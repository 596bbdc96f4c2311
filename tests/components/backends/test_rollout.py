"""Rollouts of serving groups by whole slices: ``serving.rollout`` (in-place or surge), the LeaderWorkerSet's
rolloutStrategy, the spare slice and what a diff of an engine bump says (``make e2e`` rolls each LeaderWorkerSet
stack for real: tests/e2e/test_e2e_image_rollout.py)."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from tests.conftest import STACKS, STACKS_ROOT, plan_of
from tests.fixtures.configs import DISAGG_STACK, VLLM, load, plan_edited
from tpu_serving.backends import rollout
from tpu_serving.backends.rollout import CONTAINER_RESTART, RolloutPlan
from tpu_serving.catalog.versions import PINS
from tpu_serving.config import ConfigError
from tpu_serving.config.slice_capacity import scale_from_zero
from tpu_serving.platform.lws import Rollout
from tpu_serving_tools.diff.review import diff_plans, render_markdown
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.stack import rollout_summary

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
    assert out["strategy"] == "surge" and out["groups"] == 3 and out["sparePools"] == ["vllm70b-v5e16s"]
    # 3600 s startup window (probes.maxStartupSeconds default) -> 60 minutes per group, four groups' starts
    assert out["startupMinutes"] == 60
    assert "no serving capacity lost" in out["summary"] and "about 240 minutes" in out["summary"]


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
    pinned = PINS["vllm-tpu"].value.split("/", 1)[1]  # path and tag: the stack pulls it through its image mirror
    base = json.loads(json.dumps(head).replace(pinned, pinned.replace(PINS["vllm-tpu"].version, "v0.21.0")))
    assert base != head
    diff = diff_plans(SURGE, base, head)
    (line,) = diff.rollouts
    assert line.startswith(
        "LeaderWorkerSet `vllm-llama70b/vllm`: rolling update of up to 3 groups, one slice at a time, with surge"
    )
    assert f"**Rollout:** {line}" in render_markdown(diff, "main").splitlines()


def test_rollout_diff_of_a_change_outside_the_groups_says_nothing():
    base = plan_of(SURGE).as_json()
    head = json.loads(json.dumps(base))
    lws = next(r for r in head["resources"] if r["inputs"].get("kind") == "LeaderWorkerSet")
    lws["inputs"]["metadata"].setdefault("labels", {})["team"] = "a"
    assert diff_plans(SURGE, base, head).rollouts == []


def test_rollout_spare_slice_is_not_counted_as_needed():
    capacity = plan_of(SURGE).outputs["capacity"]
    # four v5e-16 slices, of which three hold groups at the HPA's maximum; the model fits one each
    assert (capacity["chips"], capacity["servingSlices"], capacity["chipsNeeded"]) == (64, 3, 48)
    assert capacity["allocatedToNeeded"] == pytest.approx(1.33, abs=0.01)


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
        (pdb,) = [
            o
            for o in kubernetes_objects(plan_of(stack))
            if o["kind"] == "PodDisruptionBudget"
            and "leaderworkerset.sigs.k8s.io/name" in o["spec"]["selector"]["matchLabels"]
        ]
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
    host = (
        "; TPU host maintenance and repairs come on Google's schedule, not in the window: maintenance exclusions do "
        "not stop them, and each recreates a slice's VMs together; GKE may also preempt on-demand and reserved TPUs "
        "to defragment capacity; auto-repairs and host errors do not support graceful shutdown, so the pods' preStop "
        "and grace-period drain is not assured for them"
    )
    assert plan(1, 1, 182) == (
        f"{when}; {cost} 182 minutes: with one group, the service stops meanwhile{exclusion}{host}"
    )
    assert plan(1, 1, 182, held=True) == (
        f"{when}, now held back by a maintenance exclusion; {cost} 182 minutes: with one group, the service stops "
        f"meanwhile{host}"
    )
    owner = "node upgrades come on the existing cluster's channel and maintenance window (its owner's)"
    assert plan(1, 1, 30, channel=None) == (
        f"{owner}; {cost} 30 minutes: with one group, the service stops meanwhile{host}"
    )
    # the budget holds the next slice's drain only as long as GKE waits on it: an hour
    assert plan(3, 3, 59) == (
        f"{when}; {cost} 59 minutes; the disruption budget holds the next slice's drain until it serves again{host}"
    )
    assert plan(2, 1, 45).endswith(f"until it serves again; at 1 group (the minimum) the service stops meanwhile{host}")
    assert plan(2, 2, 60) == (
        f"{when}; {cost} 60 minutes, no less than the 60 minutes GKE waits on the disruption budget: the next "
        f"slice's upgrade can then take a second group down while the first still reloads{host}"
    )
    assert plan(2, 2, 60, held=True) == (
        f"{when}, now held back by a maintenance exclusion; {cost} 60 minutes, no less than the 60 minutes GKE waits "
        "on the disruption budget: upgrade the TPU pools yourself, one at a time, the next once its group serves "
        f"again (docs/upgrade.md){host}"
    )


def test_rollout_upgrade_overlap_is_refused_without_an_exclusion():
    """GKE and SRE reviews round 40, M2: two groups reloading for an hour each on a cluster the stack creates, with
    GKE's node upgrades on their own, could both be down: refused, naming the exclusion and the startup window."""
    with pytest.raises(ConfigError) as refused:
        plan_edited(SURGE, cluster=lambda c: c.update(maintenance={}))
    text = str(refused.value)
    assert "tpu-serving:cluster.maintenance.exclusions: none holds GKE's node upgrades back" in text
    assert "serving.probes.maxStartupSeconds 3600" in text and "NO_MINOR_OR_NODE_UPGRADES" in text
    # a group that reloads within GKE's hour, or a single group (its own rule), or an existing cluster: no refusal
    plan_edited(
        SURGE,
        cluster=lambda c: c.update(maintenance={}),
        serving=lambda s: s.setdefault("probes", {}).update(maxStartupSeconds=3000),
    )
    plan_edited(IN_PLACE, cluster=lambda c: c.update(maintenance={}))
    plan_edited("vllm-llama33-70b-existing", cluster=lambda c: c.pop("maintenance", None))


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_rollout_upgrade_of_every_stack_says_exclusions_do_not_stop_host_maintenance(stack):
    """Every stack has TPU pools, so every preview has an ``Upgrades:`` line saying that TPU host maintenance
    bypasses the window and the exclusions (the disaggregated vLLM, Saxml and PathwaysJob stacks had none, or none
    saying it: SRE review M2, m7)."""
    upgrade = plan_of(stack).as_json()["outputs"]["rollout"]["upgrade"]
    assert "TPU host maintenance and repairs come on Google's schedule, not in the window" in upgrade
    assert "maintenance exclusions do not stop them" in upgrade
    # GKE review m2: defragmentation preemption of on-demand TPUs, and repairs that skip the graceful drain
    assert "GKE may also preempt on-demand and reserved TPUs to defragment capacity" in upgrade
    assert "auto-repairs and host errors do not support graceful shutdown" in upgrade
    if stack != "vllm-llama33-70b-existing" and "tpu-serving:platform" not in plan_of(stack).config:
        assert upgrade.startswith("GKE upgrades the nodes on the ")  # not on a cluster someone else owns


def test_rollout_upgrade_reads_the_cluster_channel_window_and_exclusions():
    out = plan_of(IN_PLACE).as_json()["outputs"]["rollout"]
    assert out["upgrade"].startswith(
        "GKE upgrades the nodes on the REGULAR channel in the window FREQ=WEEKLY;BYDAY=SA,SU 02:00-08:00 UTC, now "
        "held back by a maintenance exclusion; "
    )
    assert "reloads for up to about 182 minutes: with one group" in out["upgrade"]


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_rollout_single_group_example_stacks_hold_node_upgrades_back(stack):
    """The example stacks whose serving is one group (serving.singleGroup), whose disaggregated roles keep one group,
    or whose PathwaysJob an upgrade fails, carry a standing NO_MINOR_OR_NODE_UPGRADES exclusion until the end of
    support (GKE reviews m3, round 36, and m2, round 37): the preview says upgrades are held back."""
    config = yaml.safe_load((STACKS_ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    serving = config["serving"]
    roles = serving.get("disaggregation", {}).values()
    # one serving group, a role of one group that every request needs, or a job that an upgrade fails
    single = (
        serving.get("singleGroup") == "accepted"
        or serving["backend"] == "pathways-job"
        or any(r.get("autoscaling", {}).get("minReplicas", r.get("replicas", 1)) == 1 for r in roles)
        # several LeaderWorkerSet groups, each reloading for an hour (GKE and SRE reviews round 40, M2)
        or (serving["backend"] == "vllm" and not roles and serving["autoscaling"]["minReplicas"] >= 2)
    )
    for cluster in plan_of(stack).of_type("gcp:container/cluster:Cluster"):
        exclusions = cluster.inputs["maintenancePolicy"].get("maintenanceExclusions", [])
        held = [
            e
            for e in exclusions
            if e["exclusionOptions"]
            == {"scope": "NO_MINOR_OR_NODE_UPGRADES", "endTimeBehavior": "UNTIL_END_OF_SUPPORT"}
        ]
        assert bool(held) == single, stack
        assert ("now held back by a maintenance exclusion" in plan_of(stack).outputs["rollout"]["upgrade"]) == single


def test_rollout_upgrade_window_and_exclusions_reach_the_preview():
    """A stack of its own: its channel, window and exclusions reach the preview's upgrade line."""
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
    plan = rollout.plan(stack, stack.serving, 3600, 345)
    assert plan.channel == "STABLE" and plan.window == "FREQ=DAILY 10:00-22:00 UTC" and plan.node_upgrades_held
    assert plan.upgrade.startswith(
        "GKE upgrades the nodes on the STABLE channel in the window FREQ=DAILY 10:00-22:00 UTC, now held back"
    )


def test_rollout_summary_lines_of_the_preview_print_the_upgrade_line():
    from tpu_serving_tools.preview.stack import rollout_summary

    outputs = plan_of(IN_PLACE).as_json()["outputs"]
    lines = rollout_summary(outputs)
    assert [line.split(":", 1)[0] for line in lines] == ["Rollout", "Drain", "Upgrades", "Scale-down", "Maintenance"]
    assert lines[2] == f"Upgrades: {outputs['rollout']['upgrade']}"
    assert lines[4] == f"Maintenance: {outputs['rollout']['maintenance']}"


SCALED_STACKS = ("vllm-llama33-70b-v5e16", "vllm-llama33-70b-existing", "vllm-llama33-70b-disagg-v6e8x2")
"""The shipped stacks with an HPA on their groups."""
SERVING_STACKS = (
    *SCALED_STACKS,
    "vllm-llama31-405b-v6e16",
    "llama31-405b-v6e16",
    "llama2-70b-disagg-v6e8x2",
    "saxml-175b-v5e32x2",
    "pathwaysjob-batch-v6e16",
    "pathwaysjob-interactive-v5e16",
)
"""Every shipped stack."""


@pytest.mark.parametrize("stack", SERVING_STACKS)
def test_rollout_output_says_how_a_scale_down_behaves(stack: str) -> None:
    """Every serving stack's ``rollout`` output has a ``scaleDown`` line, and the preview prints it."""
    from tpu_serving_tools.preview.stack import rollout_summary

    outputs = plan_of(stack).as_json()["outputs"]
    lines = [line for line in rollout_summary(outputs) if line.startswith("Scale-down: ")]
    assert len(lines) == 1, rollout_summary(outputs)
    assert any(
        w in lines[0]
        for w in ("highest-index", "nothing scales down", "replaces the JobSet", "replaces the PathwaysJob")
    ), lines


def figures(line: str, before: str) -> list[int]:
    """Every integer that directly precedes ``before`` in ``line``."""
    import re

    return [int(n) for n in re.findall(rf"(\d+) {re.escape(before)}", line)]


@pytest.mark.parametrize("stack", SCALED_STACKS)
def test_rollout_scale_down_figures_are_the_rendered_objects(stack: str) -> None:
    """The scale-down line's pace, stabilization and grace are the rendered HPAs' and pod templates', read from the
    plan's Kubernetes objects (not from the code that wrote the line)."""
    objects = kubernetes_objects(plan_of(stack))
    line = plan_of(stack).as_json()["outputs"]["rollout"]["scaleDown"]
    hpas = [o for o in objects if o["kind"] == "HorizontalPodAutoscaler"]
    assert hpas, stack
    periods = {p["periodSeconds"] for h in hpas for p in h["spec"]["behavior"]["scaleDown"]["policies"]}
    windows = {h["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] for h in hpas}
    assert set(figures(line, "s, once its metric")) == periods
    assert set(figures(line, "s, never below")) | set(figures(line, "s; the LWS")) == windows
    graces = {
        t["spec"]["terminationGracePeriodSeconds"]
        for o in objects
        if o["kind"] in ("LeaderWorkerSet", "DisaggregatedSet")
        for t in templates(o)
    }
    assert (
        graces
        and set(figures(line, "s (their grace period)"))
        | set(figures(line, "s; a role's"))
        | set(figures(line, "s; decode"))
        == graces
    ), (line, graces)


def templates(obj: dict) -> list[dict]:
    """The leader and worker pod templates of a LeaderWorkerSet, or of each role of a DisaggregatedSet."""
    sets = [r["spec"] for r in obj["spec"]["roles"]] if obj["kind"] == "DisaggregatedSet" else [obj["spec"]]
    out = []
    for s in sets:
        t = s["leaderWorkerTemplate"]
        out += [x for x in (t.get("leaderTemplate"), t.get("workerTemplate")) if x]
    return out


def test_rollout_scale_down_of_fixed_and_autoscaled_groups() -> None:
    """Fixed groups name their count; autoscaled ones the HPA's pace, the floor and the highest-index removal."""
    base = dict(
        rollout=Rollout.IN_PLACE,
        groups=2,
        fewest=1,
        slices_per_group=1,
        startup_minutes=60,
        spare_pools=(),
        grace_seconds=345,
    )
    fixed = RolloutPlan(autoscaled=False, **base).scale_down  # type: ignore[arg-type]
    assert fixed.startswith("no autoscaling: the stack fixes 2 groups") and "up to 345 s" in fixed
    scaled = RolloutPlan(
        autoscaled=True,
        scale_down_period_seconds=60,
        scale_down_stabilization_seconds=900,
        **base,  # type: ignore[arg-type]
    ).scale_down
    assert "one group every 60 s, once its metric has stayed low for 900 s" in scaled
    assert "remove a Ready group while a lower one reloads" in scaled and "at 1 group (the minimum)" in scaled
    assert "the window is shorter than a group's start (60 min)" in scaled
    two = RolloutPlan(
        autoscaled=True,
        scale_down_stabilization_seconds=3600,
        **{**base, "fewest": 2},  # type: ignore[arg-type]
    ).scale_down
    assert "never below 2 groups" in two
    assert "the window covers a group's start" in two


@pytest.mark.parametrize("stack", ("vllm-llama33-70b-v5e16", "vllm-llama33-70b-existing", "vllm-llama33-70b-v6e8"))
def test_rollout_scale_down_says_which_group_leaves_by_the_rendered_max_surge(stack: str) -> None:
    """SRE review round 16, m6: a LeaderWorkerSet with maxSurge keeps that many groups above a lower count while a
    lower group reloads (lws v0.9.0 calculateRollingUpdateReplicas); only with maxSurge 0 does the highest-index
    group leave Ready or not. The line follows the rendered LeaderWorkerSets' rolloutStrategy."""
    objects = kubernetes_objects(plan_of(stack))
    line = plan_of(stack).as_json()["outputs"]["rollout"]["scaleDown"]
    surges = {
        o["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]["maxSurge"]
        for o in objects
        if o["kind"] == "LeaderWorkerSet" and "rolloutStrategy" in o["spec"]
    }
    (surge,) = surges
    if surge:
        assert f"it keeps {surge} group above the new count (maxSurge)" in line and "Ready or not" not in line, line
    else:
        assert "removes the highest-index group, Ready or not (maxSurge 0)" in line, line


def test_plan_output_of_a_model_stack_takes_its_platforms_node_upgrades_held():
    """GKE review M1: a model stack's upgrade line follows its platform's ``nodeUpgradesHeld`` (the shipped platform
    holds them), not the model stack's own cluster settings, which shape no cluster."""
    upgrade = plan_of("vllm-llama33-70b-platform").outputs["rollout"]["upgrade"]
    assert plan_of("platform-us-east5").outputs["platform"]["nodeUpgradesHeld"] is True
    assert "upgrade the TPU pools yourself, one at a time" in upgrade
    assert "can then take a second group down" not in upgrade


@pytest.mark.parametrize("stack", ["llama31-405b-v6e16", "vllm-llama33-70b-v5e16", DISAGG_STACK])
def test_rollout_drain_line_says_a_sidecar_restart_reloads_the_group(stack):
    (drain,) = [line for line in rollout_summary(plan_of(stack).outputs) if line.startswith("Drain: ")]
    assert drain.endswith(
        "a restart of any container of a group's pods, a sidecar's too (GCS FUSE, a router's, an HTTP front end), "
        "recreates the whole group, which reloads"
    )
