"""``tpu-serving runbook --stack S`` (tools/runbook/command.py): the runbooks of docs/upgrade.md and docs/operate.md in one
stack's own names, from its offline plan (SRE review: the docs gave them in the v5e16 example's names only)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from tests.conftest import plan_of
from tpu_serving_tools.runbook import command as runbook
from tpu_serving_tools.verify.expect import resource_pools

V6E8 = "vllm-llama33-70b-v6e8"
V5E16 = "vllm-llama33-70b-v5e16"
NO_HPA = "vllm-llama31-405b-v6e16"
UPGRADE = re.compile(r"^gcloud container clusters upgrade (\S+) --location (\S+) --node-pool (\S+)", re.M)
HPA_PATCH = "patch hpa"


def text_of(stack: str) -> str:
    return runbook.render(plan_of(stack).as_json())


def upgrades(text: str) -> list[tuple[str, str, str]]:
    return UPGRADE.findall(text)


def test_the_production_examples_runbook_is_in_its_own_names():
    text = text_of(V6E8)
    steps = upgrades(text)
    assert {(cluster, location) for cluster, location, _ in steps} == {("vllm70bv6e", "us-east5")}
    pools = [pool for _, _, pool in steps]
    tpu = ["vllm70bv6e-v6e8a", "vllm70bv6e-v6e8b", "vllm70bv6e-v6e8c", "vllm70bv6e-v6e8s"]
    assert sorted(pools[:-1]) == tpu and len(set(pools)) == len(pools)  # each TPU pool exactly once
    # the pools without a standing group (the HPA's third group's, the spare) first, the CPU pool last
    assert pools == ["vllm70bv6e-v6e8c", "vllm70bv6e-v6e8s", "vllm70bv6e-v6e8a", "vllm70bv6e-v6e8b", "vllm70bv6e-cpu"]
    upgrade = text.split("## TPU host maintenance")[0]
    wait = runbook.ready_again("vllm-llama70b", "vllm")
    assert upgrade.count(wait) == 5  # a wait after each TPU pool, and one before the first
    # SRE review 31, m4: the first upgrade waits for every group and prints the gate's cover first
    first = upgrade.index("gcloud container clusters upgrade")
    assert upgrade.index(wait) < first and upgrade.index("lost-group-cover") < first
    assert text.count("maxSurge 0") == 4  # reserved pools upgrade with no surge node
    assert all(line.endswith(" --quiet") or " --quiet   #" in line for line in text.splitlines() if UPGRADE.match(line))
    disabled = 'kubectl -n vllm-llama70b patch hpa vllm --type merge -p \'{"spec":{"behavior":{"scaleDown":'
    assert text.index(disabled + '{"selectPolicy":"Disabled"}}}}\'') < text.index("--node-pool vllm70bv6e-v6e8c")
    assert text.index("--node-pool vllm70bv6e-cpu") < text.index(disabled + '{"selectPolicy":"Max"}}}}\'')
    # single-host v6e: no manual start, so no maintenance label; the drain moves a standing group instead
    assert "perform-maintenance=true" not in text
    assert "kubectl drain -l cloud.google.com/gke-nodepool=vllm70bv6e-v6e8a --ignore-daemonsets" in text
    assert "kubectl uncordon -l cloud.google.com/gke-nodepool=vllm70bv6e-v6e8b" in text
    assert "drain -l cloud.google.com/gke-nodepool=vllm70bv6e-v6e8s" in text  # a group may sit on any (SRE 14, m3)
    # the one procedure (docs/operate.md, "Moving a group before its window"): a group added before the drain
    section = text.split("## TPU host maintenance", 1)[1].split("## A VM", 1)[0]
    assert section.index('"{\\"spec\\":{\\"minReplicas\\":$((N+1))}}"') < section.index("kubectl drain")
    # SRE review round 15, M2, GKE review round 52, M1: the added group kept out of the first window's zone, held by
    # zone (a cordon, and the from-zero pools' autoscaling off), its placement checked, the zone given back, then the
    # drain; one block per zone
    blocks = section.split("# If the first window's pool is in ")[1:]
    assert [b.split(" ", 1)[0] for b in blocks] == ["us-east5-a", "us-east5-b"]
    gcloud = "gcloud container clusters update vllm70bv6e --location us-east5 --node-pool"
    for block, pools, from_zero in zip(
        blocks, (("v6e8a", "v6e8c"), ("v6e8b", "v6e8s")), ("v6e8c", "v6e8s"), strict=True
    ):
        selector = f"'cloud.google.com/gke-nodepool in (vllm70bv6e-{pools[0]},vllm70bv6e-{pools[1]})'"
        order = [
            f"kubectl cordon -l {selector}",
            f"{gcloud} vllm70bv6e-{from_zero} --no-enable-autoscaling",
            '"{\\"spec\\":{\\"minReplicas\\":$((N+1))}}"',
            "get pods -l leaderworkerset.sigs.k8s.io/name=vllm,role=leader -o wide",
            "# Check: the new group is outside",
            f"kubectl uncordon -l {selector}",
            f"{gcloud} vllm70bv6e-{from_zero} --enable-autoscaling --total-min-nodes 0 --total-max-nodes 1"
            " --location-policy ANY",
            f"kubectl drain -l cloud.google.com/gke-nodepool=vllm70bv6e-{pools[0]} ",
            f"kubectl drain -l cloud.google.com/gke-nodepool=vllm70bv6e-{pools[1]} ",
        ]
        at = [block.index(step) for step in order]
        assert at == sorted(at), list(zip(order, at, strict=True))
        assert block.count("--no-enable-autoscaling") == 1  # the fixed-size pool has no autoscaling to turn off
        assert block.count("kubectl drain") == 2
    # SRE review round 14, M2: pulumi up does not see a patched HPA; the stack's bounds go back by a patch
    assert section.rstrip().endswith(
        'kubectl -n vllm-llama70b patch hpa vllm --type merge -p \'{"spec":{"minReplicas":2}}\'\n'
        "pulumi preview --refresh   # no change left for the HPA"
    )
    zone = text.split("## A zone outage", 1)[1]
    # GKE review round 53, M1: the bounds go back only once every group serves (a maximum below the groups running
    # scales down at once, and the highest-numbered group, a serving one, goes)
    assert zone.index(runbook.ready_again("vllm-llama70b", "vllm")) < zone.index('"maxReplicas":3')
    # SRE review round 16, m5: the +1 only where the surviving zone has a free slice, read from the group map first
    assert zone.index("role=leader -o wide") < zone.index("Only if a pool of the surviving zone holds no group")
    assert zone.index("Only if a pool of the surviving zone holds no group") < zone.index("$((N+1))")
    # SRE review round 21, M1: the gate's cover is checked before any patch by hand, and said to exclude one
    cover = (
        "kubectl -n vllm-llama70b get hpa vllm -o jsonpath='{.metadata.annotations.tpu-serving\\.dev/lost-group-cover}'"
    )
    assert zone.index("The host-maintenance gate covers the lost groups itself") < zone.index(cover)
    assert zone.index(cover) < zone.index("Empty (the gate silent, or its patch refused)") < zone.index("$((N+1))")
    # GKE review round 60, m3 (SRE review round 22, m2): the lost zone's autoscaled pool off before any group is
    # added, so that the autoscaler does not grow it in the dead zone; back before the refresh that checks the HPA
    gcloud = "gcloud container clusters update vllm70bv6e --location us-east5 --node-pool"
    for zone_name, pool in (("us-east5-a", "v6e8c"), ("us-east5-b", "v6e8s")):
        off = f"# If {zone_name} is the lost zone:\n{gcloud} vllm70bv6e-{pool} --no-enable-autoscaling"
        on = f"# If {zone_name} was the lost zone:\n{gcloud} vllm70bv6e-{pool} --enable-autoscaling --total-min-nodes 0"
        assert zone.index(off) < zone.index(cover) < zone.index("$((N+1))")
        assert (
            zone.index(runbook.ready_again("vllm-llama70b", "vllm"))
            < zone.index(on)
            < zone.index("pulumi preview --refresh   # no change left")
        )
    assert zone.count("--no-enable-autoscaling") == 2  # the from-zero pools only: the fixed ones have no autoscaling
    # SRE review round 22, m4: no move before a window while the gate covers a lost group
    maintenance = text.split("## TPU host maintenance", 1)[1].split("## A VM that goes silent", 1)[0]
    assert maintenance.index(cover) < maintenance.index("$((N+1))")
    # GKE review round 53, M2: the abort gives the scale-downs back, or a lower minimum removes nothing
    assert "set the HPA's minimum back and\n# give it its scale-downs back (Max" in section
    assert (
        'kubectl -n vllm-llama70b patch hpa vllm --type merge -p \'{"spec":{"minReplicas":2,"maxReplicas":3}}\'' in zone
    )
    assert "pulumi up  " not in zone and "\npulumi up" not in zone  # no command that would not undo the patch
    assert "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute" in text
    assert '"minReplicas\\":$((N+1))' in text
    for other in ("us-west4", "vllm70b-v5e16", "vllm70b "):
        assert other not in text


def test_the_v5e16_runbook_matches_its_names_and_labels_each_pool_for_maintenance():
    text = text_of(V5E16)
    # GKE review round 60, M1: a pool is done when its nodes went down and are Ready again, not when the label goes
    assert "perform-maintenance=true   # done when none is left" not in text
    assert runbook.until_back("cloud.google.com/gke-nodepool=vllm70b-v5e16") in text
    steps = upgrades(text)
    assert {(cluster, location) for cluster, location, _ in steps} == {("vllm70b", "us-west4")}
    assert [pool for _, _, pool in steps] == [
        "vllm70b-v5e16c",
        "vllm70b-v5e16s",
        "vllm70b-v5e16",
        "vllm70b-v5e16b",
        "vllm70b-cpu",
    ]
    for pool in ("vllm70b-v5e16", "vllm70b-v5e16b", "vllm70b-v5e16c", "vllm70b-v5e16s"):
        label = f"kubectl label nodes -l cloud.google.com/gke-nodepool={pool} cloud.google.com/perform-maintenance=true"
        assert text.count(label) == 1
    assert "host-maintenance gate" in text and "kubectl drain" not in text
    assert "maxSurge 0" not in text
    assert "kubectl -n vllm-llama70b patch hpa vllm" in text


def test_a_single_zone_stacks_zone_outage_adds_no_group():
    """SRE review round 17, m1: every serving slice of vllm-llama33-70b-v5e16 is in us-west4-a, so there is no
    surviving zone to add a group in; the production example's two zones keep the procedure."""
    zone = text_of(V5E16).split("## A zone outage", 1)[1]
    assert "Every serving slice is in us-west4-a" in zone and "patch hpa" not in zone
    assert "patch hpa" in text_of(V6E8).split("## A zone outage", 1)[1]


def test_an_existing_clusters_lost_vm_is_released_in_the_namespace():
    """SRE review round 20: on an existing cluster the operators have no node rights, so the out-of-service taint is
    the owner's; the runbook releases the lost VM's pods with a forced delete in the namespace instead."""
    text = text_of("vllm-llama33-70b-existing")
    lost = text.split("## A VM that goes silent", 1)[1].split("##", 1)[0]
    assert "kubectl -n llama70b-platform delete pod <its pods> --grace-period=0 --force" in lost
    assert "taint" in lost and "kubectl taint" not in lost and "kubectl get nodes" not in lost
    assert "even reading nodes" in text.splitlines()[2]
    assert "kubectl taint nodes <node> node.kubernetes.io/out-of-service" in text_of(V6E8)


def test_a_stack_without_an_hpa_prints_no_hpa_patch():
    text = text_of(NO_HPA)
    assert HPA_PATCH not in text
    assert "lost-group-cover" not in text  # no gate, no HPA: nothing covers a lost group
    assert "# Every serving slice is in " in text  # one slice, one zone: wait for it (no HPA, no group to add)
    assert [pool for _, _, pool in upgrades(text)] == ["vllm405b-v6e16", "vllm405b-cpu"]


def without_deployment_outputs(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` as a program that builds the components itself makes it: no ``TpuServingDeployment`` outputs."""
    edited = copy.deepcopy(plan)
    edited["outputs"] = {}
    return edited


def without_tpu_pools(plan: dict[str, Any]) -> dict[str, Any]:
    edited = without_deployment_outputs(plan)
    tpu = resource_pools(plan["resources"])
    assert tpu, "the plan creates TPU pools to take out"
    edited["resources"] = [r for r in edited["resources"] if r.get("inputs", {}).get("name") not in tpu]
    return edited


def test_a_plan_with_no_tpu_pool_fails_loudly(capsys, monkeypatch):
    plan = without_tpu_pools(plan_of(V6E8).as_json())
    with pytest.raises(runbook.RunbookError, match="no TPU node pool"):
        runbook.render(plan)
    from tpu_serving_tools.preview import offline

    monkeypatch.setattr(offline, "preview_stacks", lambda root, stacks: [(stacks[0], plan)])
    assert runbook.main(["--stack", V6E8]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"error: {V6E8}: no runbook: its plan creates no TPU node pool")


@pytest.mark.parametrize("stack", [V6E8, V5E16])
def test_a_program_without_the_deployments_outputs_is_read_off_its_resources(stack: str):
    """User review 11, M3: ``runbook --root`` on a program that builds the components itself said "no TPU node
    pool"; its cluster, namespace, pools and whether a manual start is listed come from its resources instead."""
    plan = plan_of(stack).as_json()
    theirs, ours = runbook.names(without_deployment_outputs(plan)), runbook.names(plan)
    assert theirs.tpu_pools and [p.name for p in theirs.tpu_pools] == [p.name for p in ours.tpu_pools]
    assert (theirs.cluster, theirs.namespace, theirs.workload) == (ours.cluster, ours.namespace, ours.workload)
    assert theirs.manual_start == ours.manual_start
    text = runbook.render(without_deployment_outputs(plan))
    assert upgrades(text) and upgrades(text) == upgrades(runbook.render(plan))


def test_a_program_without_an_operator_role_is_told_the_rights_it_needs():
    plan = plan_of(V6E8).as_json()
    assert "grants the namespace's to tenancy.operators" in runbook.render(plan)
    edited = copy.deepcopy(plan)
    edited["resources"] = [r for r in plan["resources"] if not r["type"].endswith(":Role")]
    assert "this program binds no operators" in runbook.render(edited)
    # the Role alone binds nobody: Tenancy makes its RoleBinding only for named operators (library review 4, m7)
    edited["resources"] = [r for r in plan["resources"] if not r["type"].endswith(":RoleBinding")]
    assert "this program binds no operators" in runbook.render(edited)


@pytest.mark.parametrize(
    "stack",
    [
        "llama2-70b-disagg-v6e8x2",
        "saxml-175b-v5e32x2",
        "pathwaysjob-batch-v6e16",
        "pathwaysjob-interactive-v5e16",
        "vllm-llama33-70b-disagg-v6e8x2",
        "vllm-llama33-70b-existing",
    ],
)
def test_every_other_stack_prints_each_runbook_or_says_what_is_not_covered(stack):
    text = text_of(stack)
    for title in ("## Node upgrades", "## TPU host maintenance", "## A VM that goes silent", "## A zone outage"):
        assert text.count(title) == 1
    assert upgrades(text), "no upgrade command"
    lws = "leaderworkerset" in text.splitlines()[1]
    assert lws or "No LeaderWorkerSet" in text
    assert (HPA_PATCH in text) or "# Not covered:" in text or "# Every serving slice is in " in text


def test_until_back_is_the_one_completion_rule_of_a_manual_start_in_the_runbook_and_the_docs() -> None:
    """GKE review round 61, M1: a pool started by hand is done when its nodes have been Ready again since the start,
    not when the perform label is gone (GKE may take it off within a minute); the printed runbook and docs/operate.md
    say it with the same self-ending loop, started from the time noted before the label."""
    from tests.conftest import ROOT

    loop = runbook.until_back("cloud.google.com/gke-nodepool=vllm70b-v5e16")
    text = text_of(V5E16)
    assert text.index(runbook.STARTED_AT) < text.index("cloud.google.com/perform-maintenance=true") < text.index(loop)
    docs = (ROOT / "docs" / "operate.md").read_text()
    assert loop in docs and docs.index(runbook.STARTED_AT) < docs.index(loop)
    assert "Done when no node of the pool keeps the label" not in docs
    assert " -w   # done when" not in text  # SRE review round 26, m4: no watch held open for hours


def test_a_single_pool_without_a_manual_start_gets_no_move_or_drain():
    """New-user review 11, m1: a one-pool stack's runbook told it to move its group and drain the pool."""
    plan = copy.deepcopy(plan_of(V6E8).as_json())
    assert not runbook.names(plan).manual_start  # single-host v6e: Cloud TPU lists no manual start
    assert "kubectl drain" in runbook.render(plan)
    plan["outputs"]["slices"] = plan["outputs"]["slices"][:1]
    text = runbook.render(plan)
    assert "kubectl drain" not in text and "# One serving pool (" in text


def test_a_plan_serving_two_workloads_says_the_runbook_covers_one():
    """Library review 1, M3: a program serving two models got the first one's runbook, silently."""
    plan = copy.deepcopy(plan_of(V6E8).as_json())
    assert "Not covered: this plan also serves" not in runbook.render(plan)
    (lws,) = [r for r in plan["resources"] if r["type"].endswith(":LeaderWorkerSet")]
    twin = copy.deepcopy(lws)
    twin["inputs"]["metadata"] = {**twin["inputs"]["metadata"], "namespace": "small", "name": "vllm-small"}
    plan["resources"].append(twin)
    (line,) = [x for x in runbook.render(plan).splitlines() if x.startswith("# Not covered: this plan also serves")]
    assert "small/leaderworkerset/vllm-small" in line and "the waits, drains and holds below are" in line


def _two_models() -> dict:
    """A program's plan (no deployment outputs) serving two models on pools of their own: V6E8's, and a twin
    LeaderWorkerSet in namespace ``small`` whose pods select, and alone tolerate, the tainted pool ``small-v6e8``."""
    plan = copy.deepcopy(plan_of(V6E8).as_json())
    plan["outputs"] = {}
    (lws,) = [r for r in plan["resources"] if r["type"].endswith(":LeaderWorkerSet")]
    twin = copy.deepcopy(lws)
    twin["urn"] += "-small"
    twin["inputs"]["metadata"] = {**twin["inputs"]["metadata"], "namespace": "small", "name": "vllm-small"}
    template = twin["inputs"]["spec"]["leaderWorkerTemplate"]
    for part in ("leaderTemplate", "workerTemplate"):
        if part in template:
            pod = template[part]["spec"]
            pod["nodeSelector"] = {**(pod.get("nodeSelector") or {}), "cloud.google.com/gke-nodepool": "small-v6e8"}
            pod["tolerations"] = [
                *(pod.get("tolerations") or []),
                {"key": "model", "value": "small", "effect": "NoSchedule"},
            ]
    pools = [r for r in plan["resources"] if r["type"] == "gcp:container/nodePool:NodePool"]
    tpu = next(r for r in pools if str(r["inputs"]["nodeConfig"]["machineType"]).startswith("ct6e"))
    small = copy.deepcopy(tpu)
    small["urn"] += "-small"
    small["inputs"]["name"] = "small-v6e8"
    config = small["inputs"]["nodeConfig"]
    config["taints"] = [*(config.get("taints") or []), {"key": "model", "value": "small", "effect": "NO_SCHEDULE"}]
    plan["resources"] += [twin, small]
    return plan


def _tpu_pools_line(text: str) -> str:
    return next(x for x in text.splitlines() if x.startswith("# TPU pools: "))


def test_runbook_of_one_of_two_workloads_lists_its_own_pools_only():
    """Library review 2, M4: a program serving two models got the first one's runbook with the second model's pool
    among its pools, and no way to write the second's."""
    plan = _two_models()
    first = runbook.render(plan)
    assert "small-v6e8" not in first and "vllm70bv6e-v6e8a" in _tpu_pools_line(first)
    assert "--workload <namespace>/<name>" in first
    second = runbook.render(plan, "small/vllm-small")
    assert _tpu_pools_line(second) == "# TPU pools: small-v6e8"
    assert "namespace small, leaderworkerset vllm-small" in second
    assert "vllm70bv6e-v6e8a" not in second.split("# Not covered: this plan also serves", 1)[1].split("\n", 1)[1]
    with pytest.raises(
        runbook.RunbookError,
        match=r"--workload 'small/vllm': its plan serves no such workload; valid: vllm-llama70b/vllm, small/vllm-small",
    ):
        runbook.render(plan, "small/vllm")


def test_runbook_names_only_its_own_hpas_and_the_rbac_the_plan_has():
    """Library review 3, m1 and m2: the second model's runbook named the first one's HPA as its roles', and a runbook
    named a ClusterRole the plan does not create."""
    plan = _two_models()
    second = runbook.render(plan, "small/vllm-small")
    assert "leaderworkerset vllm-small, no HPA on it\n" in second
    assert "ClusterRole vllm-llama70b-tpu-serving-operator the node steps" in runbook.render(plan)
    plan["resources"] = [r for r in plan["resources"] if not r["type"].endswith(":ClusterRole")]
    first = runbook.render(plan)
    assert "ClusterRole vllm-llama70b-tpu-serving-operator" not in first
    assert "the plan names no operators, so no ClusterRole grants the node steps" in first


def test_runbook_a_zone_outage_of_fixed_groups_says_what_to_do():
    """Library review 4, M8: a two-zone serving of fixed groups got a zone-outage section with one unrelated line."""
    plan = copy.deepcopy(plan_of(V6E8).as_json())
    plan["resources"] = [r for r in plan["resources"] if not r["type"].endswith(":HorizontalPodAutoscaler")]
    text = runbook.render(plan)
    zone = text[text.index("## A zone outage") :]
    assert "DisaggregatedSet" not in zone and "# No HPA: the groups are fixed" in zone
    assert "kubectl -n vllm-llama70b patch leaderworkerset vllm --type merge" in zone


def test_runbook_a_drain_with_no_free_slice_says_the_group_stays_down():
    """Library review 5, M3: a fixed-group runbook drained a group "while the others carry its requests" with no
    slice for it to move to."""
    plan = copy.deepcopy(plan_of(V6E8).as_json())
    plan["resources"] = [r for r in plan["resources"] if not r["type"].endswith(":HorizontalPodAutoscaler")]
    names = runbook.names(plan)
    text = runbook.render(plan)
    if all(p.standing for p in names.tpu_pools):
        assert "# No HPA and no free slice" in text
    else:
        assert "# No HPA: skip adding a group" in text
    fixed = copy.deepcopy(plan)
    spare = {p.name for p in names.tpu_pools if not p.standing}
    fixed["resources"] = [
        r
        for r in fixed["resources"]
        if not (r["type"] == "gcp:container/nodePool:NodePool" and r["inputs"].get("name") in spare)
    ]
    fixed["outputs"] = {k: v for k, v in fixed["outputs"].items() if k not in ("slices", "rollout")}
    assert all(p.standing for p in runbook.names(fixed).tpu_pools)
    assert "# No HPA and no free slice (every serving pool holds a standing group)" in runbook.render(fixed)


def test_the_maintenance_move_waits_for_the_hpa_to_add_the_group_before_it_waits_for_ready():
    """SRE review 29, M2: the HPA acts on a raised minimum at its next sync (about 12 s measured), so the READY loop
    read at once saw every old group Ready and ended before the added group existed; the pasted procedure then
    drained a standing group with nothing to cover it."""
    lines = text_of(V6E8).split("## TPU host maintenance")[1].splitlines()
    patch = next(i for i, line in enumerate(lines) if HPA_PATCH in line and "$((N+1))" in line)
    wait_grown = (
        'until [ "$(kubectl -n vllm-llama70b get leaderworkerset vllm -o jsonpath=\'{.spec.replicas}\')" -gt "$N" ]'
    )
    assert lines[patch + 1].startswith(wait_grown), lines[patch + 1]
    assert lines[patch + 2] == runbook.ready_again("vllm-llama70b", "vllm")


def test_runbook_a_group_on_a_fallback_slice_in_the_stacks_names():
    """New-user review of the capacity fallback, m6: the move back in the stack's names, with the class's own selector;
    the GKE, SRE and new-user reviews of it: the class's later steps stay, so the runbook shows where the new leader
    landed, and a stack of one group is told the move is an outage (its own pool holds one slice)."""
    one, several = text_of(NO_HPA), text_of(V6E8)
    selector = (
        "'cloud.google.com/compute-class=vllm-llama405b-serving,cloud.google.com/gke-nodepool notin (vllm405b-v6e16)'"
    )
    section = one.split("## A group on a fallback slice", 1)[1]
    steps = [line.split("   #")[0] for line in section.splitlines() if line.startswith(("kubectl", "until", ": "))]
    leader = '"vllm-${GROUP:?set GROUP to the index of the group first}"'  # SRE review of the runbook: not <group>
    assert steps[2:4] == [f"kubectl cordon -l {selector}", f"kubectl -n vllm-llama405b delete pod {leader}"]
    assert steps[4] == f"kubectl -n vllm-llama405b get pod {leader} -o wide"
    assert 'until [ "$(kubectl -n vllm-llama405b get pod "vllm-$GROUP" -o jsonpath=' in steps[5]
    assert "Still Pending after about 10 minutes" in section and "undoes nothing once" in section
    assert steps[-1] == f"kubectl uncordon -l {selector}"
    assert "recreating it is an outage" in section and "replicas" not in section
    moved = several.split("## A group on a fallback slice", 1)[1]
    assert "outage" not in moved and "only while the others serve" in moved
    first = [line for line in moved.splitlines() if line.startswith(("kubectl", "until"))][3]
    assert first.startswith(runbook.ready_again("vllm-llama70b", "vllm"))  # the others serve before the delete
    assert "compute-class=vllm-llama70b-serving" in moved and "vllm70bv6e-v6e8s)" in moved
    assert "## A group on a fallback slice" not in text_of(V5E16)  # no class, no section
