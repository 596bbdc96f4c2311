"""The runbook of a workload that restarts as a whole, a JobSet (Saxml) or a PathwaysJob (tools/runbook/whole.py; SRE
review 30, M2): a disruption of any slice restarts every slice, so host maintenance and node upgrades one pool at a
time made one outage per pool. It starts every pending pool's maintenance at once and upgrades the pools back to back,
then waits once; the LeaderWorkerSet stacks keep one pool at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import plan_of
from tests.tools.runbook.test_runbook_waits import run_wait
from tpu_serving_tools.preview.stack import rollout_summary
from tpu_serving_tools.runbook import command as runbook

SAXML = "saxml-175b-v5e32x2"
WHOLE = (SAXML, "pathwaysjob-batch-v6e16", "pathwaysjob-interactive-v5e16")
V5E16 = "vllm-llama33-70b-v5e16"
STARTED = '"cloud.google.com/gke-nodepool in ($P)"'
UPGRADE = "gcloud container clusters upgrade "


def sections(stack: str) -> tuple[list[str], list[str]]:
    """The node-upgrade and host-maintenance sections' lines of ``stack``'s runbook."""
    text = runbook.render(plan_of(stack).as_json())
    upgrade, rest = text.split("## TPU host maintenance", 1)
    upgrade = "## Node upgrades" + upgrade.split("## Node upgrades", 1)[1]
    return upgrade.splitlines(), rest.split("## A VM that goes silent", 1)[0].splitlines()


def commands(lines: list[str]) -> list[str]:
    return [line for line in lines if line and not line.startswith(("#", "    "))]


def said(lines: list[str]) -> str:
    """The comments of ``lines``, as one text."""
    return " ".join(line.removeprefix("# ") for line in lines if line.startswith("# "))


@pytest.mark.parametrize("stack", WHOLE)
def test_a_whole_workloads_maintenance_starts_every_pending_pool_at_once(stack: str) -> None:
    names = runbook.names(plan_of(stack).as_json())
    _, maintenance = sections(stack)
    steps = commands(maintenance)
    labels = [line for line in steps if line.startswith("kubectl label nodes")]
    assert labels == [f"kubectl label nodes -l {STARTED} cloud.google.com/perform-maintenance=true --overwrite"]
    wait = runbook.serving_again(names)
    pools = ",".join(p.name for p in names.tpu_pools)
    pending = next(line for line in steps if line.startswith("P=$("))
    assert f"-l 'cloud.google.com/gke-nodepool in ({pools}),cloud.google.com/scheduled-maintenance-time'" in pending
    order = [pending, 'echo "starting: ${P:?no pool has maintenance pending}"', labels[0], *wait]
    assert [line for line in steps if line in order] == order  # each once, in this order
    back = runbook.until_back(STARTED, "those pools")
    assert steps.index(labels[0]) < steps.index(back) < steps.index(wait[0]) == len(steps) - 1
    assert steps[steps.index(labels[0]) - 1].startswith("T=$(date -u")
    assert not any("One pool at a time" in line for line in maintenance)
    assert "GKE's parallel strategy" in said(maintenance)


@pytest.mark.parametrize("stack", WHOLE)
def test_a_whole_workloads_node_upgrades_run_back_to_back_with_one_wait_at_the_end(stack: str) -> None:
    """Every pool of the workload, the CPU pools too (a PathwaysJob's head runs on one: its upgrade restarts the job as
    a slice's does), then one wait; the section says the workload is down for the whole window."""
    names = runbook.names(plan_of(stack).as_json())
    upgrade, _ = sections(stack)
    steps = commands(upgrade)
    first = next(i for i, line in enumerate(steps) if line.startswith(UPGRADE))
    assert all(line.startswith(UPGRADE) for line in steps[first:-1]), steps[first:]
    pools = [line.split("--node-pool ", 1)[1].split(" ", 1)[0] for line in steps[first:-1]]
    assert pools == [*(p.name for p in runbook.upgrade_order(names)), *names.cpu_pools]
    assert steps[-1:] == runbook.serving_again(names)
    assert "the workload is down for the whole window (GKE's parallel strategy" in said(upgrade)
    assert (
        upgrade[0]
        == '## Node upgrades, the workload\'s pools back to back (docs/upgrade.md, "Node drains and upgrades")'
    )


def test_leaderworkerset_stacks_keep_one_pool_at_a_time() -> None:
    """A guard, not a change: the LeaderWorkerSet flagship still waits for its groups between pools."""
    upgrade, maintenance = sections(V5E16)
    assert upgrade[0].startswith("## Node upgrades, one pool at a time")
    steps = commands(maintenance)
    labels = [i for i, line in enumerate(steps) if line.lstrip().startswith("kubectl label nodes")]
    assert len(labels) == 4 and "$P" not in "\n".join(maintenance)
    # SRE review 34, M2: the Available loop, which has no timeout to fall through to the next pool
    assert all(steps[i - 3].startswith('until [ "$(kubectl -n vllm-llama70b get leaderworkerset vllm') for i in labels)
    # SRE review 30, m5: each pool's block runs only where maintenance is pending (a spare's wait never ended)
    assert all(
        steps[i - 2].startswith("if kubectl get nodes -l 'cloud.google.com/gke-nodepool=")
        and steps[i - 2].endswith(",cloud.google.com/scheduled-maintenance-time' -o name | grep -q .; then")
        and steps[i + 2] == "fi"
        for i in labels
    ), steps


def test_the_pending_pools_are_found_once_each_and_labelled_together(tmp_path: Path) -> None:
    """The pending pools' line, its check and the label, run against a stand-in kubectl: each pool with a node whose
    maintenance is scheduled once, all in one label; none pending stops a pasted script before any label."""
    _, maintenance = sections(SAXML)
    steps = commands(maintenance)
    at = next(i for i, line in enumerate(steps) if line.startswith("P=$("))
    label = next(line for line in steps if line.startswith("kubectl label nodes"))
    script = "\n".join([*steps[at : at + 2], label])
    pending = "saxml175b-v5e32-1\nsaxml175b-v5e32-0\nsaxml175b-v5e32-1\n"
    code, _, args, out = run_wait(tmp_path / "pending", script, [pending])
    assert code == 0 and out.startswith("starting: saxml175b-v5e32-0,saxml175b-v5e32-1\n")
    assert "scheduled-maintenance-time" in args[0]
    assert args[1].startswith("label nodes -l cloud.google.com/gke-nodepool in (saxml175b-v5e32-0,saxml175b-v5e32-1) ")
    code, _, args, _ = run_wait(tmp_path / "none", script, [""])
    assert code != 0 and len(args) == 1


@pytest.mark.parametrize("stack", WHOLE)
def test_the_preview_maintenance_line_of_a_whole_workload_starts_every_pool_at_once(stack: str) -> None:
    (line,) = [x for x in rollout_summary(plan_of(stack).outputs) if x.startswith("Maintenance: ")]
    assert "one pool at a time" not in line
    assert "start it on every serving pool with maintenance pending at once" in line
