"""``tpu-serving runbook`` on a stack with a capacity fallback (tools/runbook/fallback.py): the nodes GKE made for the
serving's ComputeClass in every section (SRE review of the runbook, M3), the group to move as a shell variable that
fails safe when pasted unset, what each own pool does for a moved group (fixed size or autoscaled), and a Spot step's
preemption notice."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, plan_of
from tests.tools.runbook.test_runbook_waits import run_wait
from tpu_serving_tools.runbook import command as runbook
from tpu_serving_tools.runbook.fallback import SET_GROUP

V6E8 = "vllm-llama33-70b-v6e8"
ONE_GROUP = "vllm-llama31-405b-v6e16"
NO_CLASS = "vllm-llama33-70b-v5e16"
OWN_70B = "vllm70bv6e-v6e8a,vllm70bv6e-v6e8b,vllm70bv6e-v6e8c,vllm70bv6e-v6e8s"
CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"


def sections(text: str) -> dict[str, str]:
    """The runbook's sections by the first word of their title (Node, TPU, A VM..., A zone..., A group...)."""
    return {part.split("\n", 1)[0]: part for part in text.split("\n\n## ")[1:]}


def section(text: str, title: str) -> str:
    (found,) = [body for head, body in sections(text).items() if head.startswith(title)]
    return found


def selector(klass: str, own: str) -> str:
    return f"'cloud.google.com/compute-class={klass},cloud.google.com/gke-nodepool notin ({own})'"


def prose(lines: str) -> str:
    """The comment lines of ``lines`` as one text (the runbook wraps them)."""
    return " ".join(line[2:] for line in lines.splitlines() if line.startswith("# "))


def test_each_section_lists_the_nodes_gke_made_for_the_class() -> None:
    """SRE review of the runbook, M3: the upgrade, host-maintenance, lost-VM and zone-outage sections selected the
    stack's own pools only (``cloud.google.com/gke-nodepool``), so a group on a pool GKE made for the class was in
    none of them. Each now lists those nodes by the class's label, in the stack's names."""
    for stack, klass, own in (
        (V6E8, "vllm-llama70b-serving", OWN_70B),
        (ONE_GROUP, "vllm-llama405b-serving", "vllm405b-v6e16"),
    ):
        text = runbook.render(plan_of(stack).as_json())
        made = selector(klass, own)
        listing = f"kubectl get nodes -l {made} -L cloud.google.com/gke-nodepool"
        upgrade = section(text, "Node upgrades")
        assert listing in upgrade.splitlines()
        assert upgrade.index(listing) < upgrade.index("gcloud container clusters upgrade")
        assert "the upgrades below do not name it" in prose(upgrade)
        maintenance = section(text, "TPU host maintenance")
        pending = f"kubectl get nodes -l {made[:-1]},cloud.google.com/scheduled-maintenance-time' \\"
        assert pending in maintenance.splitlines(), stack
        assert "a fallback slice's maintenance comes at its window" in prose(maintenance)
        lost = section(text, "A VM that goes silent").splitlines()
        assert lost[2].startswith(f"{listing}   # or a node of a pool GKE made for the class"), lost
    zone = section(runbook.render(plan_of(V6E8).as_json()), "A zone outage")
    by_zone = f"kubectl get nodes -l {selector('vllm-llama70b-serving', OWN_70B)} -L topology.kubernetes.io/zone,"
    assert zone.index(by_zone) < zone.index("--no-enable-autoscaling")
    assert "Nothing below holds a pool GKE makes for the class" in prose(zone)
    one_zone = section(runbook.render(plan_of(ONE_GROUP).as_json()), "A zone outage")
    assert "The class vllm-llama405b-serving makes its fallback slices in that zone only" in one_zone


def test_the_zone_hold_says_it_holds_no_slice_gke_makes_for_the_class() -> None:
    """SRE review of the runbook, M3: the move before a window cordons the first window's zone's own pools; a slice GKE
    makes for the class in that zone is not held, and the placement check after the added group sees it."""
    moves = section(runbook.render(plan_of(V6E8).as_json()), "TPU host maintenance")
    blocks = moves.split("# If the first window's pool is in ")[1:]
    for block, zone in zip(blocks, ("us-east5-a", "us-east5-b"), strict=True):
        note = block.index("# The cordon holds no slice GKE makes for the class vllm-llama70b-serving")
        assert block.index("kubectl cordon -l ") < note < block.index("# Check: the new group is outside")
        assert f"new fallback slice in {zone} (the check below sees it)" in block


def test_a_stack_without_a_class_lists_no_class_nodes() -> None:
    assert "compute-class" not in runbook.render(plan_of(NO_CLASS).as_json())


def test_the_group_to_move_is_a_shell_variable_that_stops_the_steps_when_unset(tmp_path: Path) -> None:
    """SRE review of the runbook: ``vllm-<group>`` pasted unedited read as redirections (``<group``, ``>``). The group
    is now ``$GROUP``, set first; unset, ``${GROUP:?...}`` stops the shell before any kubectl names a group."""
    move = section(runbook.render(plan_of(V6E8).as_json()), "A group on a fallback slice")
    assert "<group>" not in move
    lines = move.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("GROUP=''")))
    last = first + next(i for i, line in enumerate(lines[first:]) if "# the new leader Ready" in line)
    steps = "\n".join(lines[first : last + 1])
    leader = f'"vllm-${{GROUP:?{SET_GROUP}}}"'
    assert f"kubectl -n vllm-llama70b delete pod {leader}" in steps
    assert f"kubectl -n vllm-llama70b get pod {leader} -o wide" in steps
    assert lines[last].startswith(
        f': "${{GROUP:?{SET_GROUP}}}"; until [ "$(kubectl -n vllm-llama70b get pod "vllm-$GROUP"'
    )
    code, _, args, _ = run_wait(tmp_path / "unset", steps, ["True"])
    assert code != 0 and args == []  # pasted unedited: no kubectl ran
    code, _, args, _ = run_wait(tmp_path / "set", steps.replace("GROUP=''", "GROUP='1'", 1), ["True"])
    assert code == 0 and args[:2] == ["-n vllm-llama70b delete pod vllm-1", "-n vllm-llama70b get pod vllm-1 -o wide"]


def test_the_move_back_says_what_each_own_pool_does_by_its_kind() -> None:
    """The 70B stack's reserved v6e8a and v6e8b are of fixed size (no autoscaling block: neither started empty nor let
    go to zero, tpu_serving.config.slice_capacity): the autoscaler adds no slice to them nor removes an idle one. The
    runbook said an own pool's idle slice goes in about 10 minutes, true of the autoscaled pools only."""
    several = prose(section(runbook.render(plan_of(V6E8).as_json()), "A group on a fallback slice"))
    assert (
        "Own pools of fixed size (vllm70bv6e-v6e8a, vllm70bv6e-v6e8b): the autoscaler adds no slice to them" in several
    )
    assert "Own pools that autoscale (vllm70bv6e-v6e8c, vllm70bv6e-v6e8s): the autoscaler adds a slice" in several
    assert "removes an idle one in about 10 minutes" in several
    one = prose(section(runbook.render(plan_of(ONE_GROUP).as_json()), "A group on a fallback slice"))
    assert "Own pools that autoscale (vllm405b-v6e16)" in one and "fixed size" not in one
    # an existing cluster's pools are their owner's: the plan does not say which kind they are
    plan = copy.deepcopy(plan_of(V6E8).as_json())
    plan["resources"] = [r for r in plan["resources"] if r["type"] != "gcp:container/cluster:Cluster"]
    theirs = prose(section(runbook.render(plan), "A group on a fallback slice"))
    assert "are the cluster owner's" in theirs and "fixed size" not in theirs and "that autoscale" not in theirs
    docs = " ".join((ROOT / "docs" / "operate.md").read_text().split())
    assert "makes the autoscaler grow the serving's pool" not in docs
    assert "reserved `v6e8a` and `v6e8b` are of fixed size: the autoscaler adds no slice to them" in docs


def _without_spot(plan: dict[str, Any]) -> dict[str, Any]:
    plan = copy.deepcopy(plan)
    for r in plan["resources"]:
        if r["type"] == CLASS_TYPE:
            r["inputs"]["spec"]["priorities"] = [p for p in r["inputs"]["spec"]["priorities"] if not p.get("spot")]
    return plan


def test_a_spot_step_says_its_preemption_notice() -> None:
    """GKE, "Spot VMs": 30 s of graceful termination after the preemption notice by default, the first 15 s for the
    pods (tools/runbook/fallback.py, SPOT_NOTICE's source); said only where the class has a Spot step."""
    notice = "GKE gives its node about 30 s after the preemption notice and the serving pods the first 15 of them"
    for stack in (V6E8, ONE_GROUP):
        assert notice in prose(section(runbook.render(plan_of(stack).as_json()), "A group on a fallback slice"))
    no_spot = section(runbook.render(_without_spot(plan_of(V6E8).as_json())), "A group on a fallback slice")
    assert "Spot" not in no_spot and "kubectl cordon -l 'cloud.google.com/compute-class=" in no_spot


def test_runbook_maintenance_of_a_one_group_class_stack_ends_by_listing_the_fallback_slices() -> None:
    """SRE review of the capacity fallback, M1 (405B): the one group, recreated while its pool was in maintenance,
    may land on the class's Spot step, where the Available wait also ends; the section's last step lists the class's
    nodes outside the stack's pools, and it says when a wait for a pool that lists no node will never end."""
    maintenance = section(runbook.render(plan_of("vllm-llama31-405b-v6e16").as_json()), "TPU host maintenance")
    steps = [line for line in maintenance.splitlines() if line.strip()]
    assert steps[-1].startswith(
        "kubectl get nodes -l 'cloud.google.com/compute-class=vllm-llama405b-serving,cloud.google.com/gke-nodepool "
        "notin (vllm405b-v6e16)'   # last: a group on a fallback slice now?"
    ), steps[-1]
    assert "lists none never ends" in maintenance and "stop it (Ctrl-C)" in maintenance
