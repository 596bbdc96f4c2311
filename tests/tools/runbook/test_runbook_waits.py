"""The runbooks' waits (tools/runbook/waits.py) for every serving workload, not only a LeaderWorkerSet (SRE review 30,
M1): a ``kubectl get <kind> <name> -w`` never returns, and a DisaggregatedSet's (LWS v0.10.0) shows only NAME and AGE,
a JobSet's or PathwaysJob's nothing about the servers having loaded. Each wait is a loop that ends by itself once the
workload serves again; the loops are run here against a stand-in ``kubectl`` and ``sleep``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, plan_of
from tpu_serving_tools.runbook import command as runbook

DISAGG = "vllm-llama33-70b-disagg-v6e8x2"
SAXML = "saxml-175b-v5e32x2"
PATHWAYS = ("pathwaysjob-batch-v6e16", "pathwaysjob-interactive-v5e16")
NOT_LWS = (DISAGG, SAXML, *PATHWAYS)


def text_of(stack: str) -> str:
    return runbook.render(plan_of(stack).as_json())


def waits_after_the_first_upgrade(text: str) -> list[str]:
    """The lines after the first ``gcloud container clusters upgrade`` that a wait follows, up to the next command
    that is not a wait: what the runbook waits on before it goes on (a JobSet's or PathwaysJob's pools are upgraded
    back to back, and waited on once: tools/runbook/whole.py)."""
    lines = text.split("## TPU host maintenance")[0].splitlines()
    for i, line in enumerate(lines):
        waits = []
        for after in lines[i + 1 :] if line.startswith("gcloud container clusters upgrade") else ():
            if after.startswith(("gcloud ", "#")) or not after:
                break
            waits.append(after)
        if waits:
            return waits
    return []


@pytest.mark.parametrize("stack", NOT_LWS)
def test_no_wait_of_a_runbook_is_a_watch_that_never_ends(stack: str) -> None:
    text = text_of(stack)
    assert not [line for line in text.splitlines() if " -w " in f"{line} "], "a watch never returns"
    waits = [line for line in text.splitlines() if "# wait" in line]
    assert waits and all(line.startswith("until ") and "; do sleep " in line for line in waits), waits


def test_a_disaggregatedsets_wait_reads_each_roles_leaderworkersets() -> None:
    """The v0.10.0 controller writes no status on the DisaggregatedSet and names each role's LeaderWorkerSet
    ``<set>-<slice>-<revision>-<role>`` (a hash the plan cannot know), labelling it with the set's name and the role:
    the wait selects them by those labels, one loop per role, READY against the replicas."""
    waits = waits_after_the_first_upgrade(text_of(DISAGG))
    selector = "disaggregatedset.x-k8s.io/name=vllm,disaggregatedset.x-k8s.io/role="
    assert waits == [
        f"until kubectl -n vllm-pd70b get leaderworkerset -l {selector}{role} -o jsonpath='{{range .items[*]}}"
        "{.spec.replicas} {.status.readyReplicas}{\"\\n\"}{end}' | awk '$2 + 0 < $1 + 0 {n++} END {exit (n > 0 || "
        f"NR == 0)}}'; do sleep 30; done   # wait: every {role} LeaderWorkerSet's READY back to its replicas"
        for role in ("prefill", "decode")
    ]


@pytest.mark.parametrize(
    ("stack", "jobset", "pods"), [(SAXML, "sax-model-server-set", 16), *((s, None, 5) for s in PATHWAYS)]
)
def test_a_jobsets_wait_counts_its_ready_pods(stack: str, jobset: str | None, pods: int) -> None:
    """Every pod of the JobSet (a PathwaysJob's: the JobSet its controller makes, of the same name) by the label the
    JobSet controller puts on each (the manifests' own labels also select the Saxml cell's Deployments and its
    publisher Job, whose finished pod is never Ready), against the count the plan makes: 2 slices of 8 VMs for Saxml,
    a head and a 4x4 v6e or v5e slice's 4 VMs for the PathwaysJobs."""
    names = runbook.names(plan_of(stack).as_json())
    (wait,) = waits_after_the_first_upgrade(text_of(stack))
    assert f"get pods -l jobset.sigs.k8s.io/jobset-name={jobset or names.workload} " in wait
    assert f'grep -c True)" -ge {pods} ]' in wait and f"all {pods} pods" in wait


# --------------------------------------------------------------------------- the loops, run


def run_wait(tmp_path: Path, line: str, outputs: list[str]) -> tuple[int, int, list[str], str]:
    """Run ``line`` under bash with a stand-in ``kubectl`` that prints ``outputs[i]`` after ``i`` sleeps (the last one
    from then on) and a ``sleep`` that only counts; return the exit code, the sleeps, kubectl's argument lists and
    what the line printed."""
    state = tmp_path / "state"
    state.mkdir(parents=True)
    (state / "sleeps").write_text("0")
    for i, out in enumerate(outputs):
        (state / f"out.{i}").write_text(out)
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    last = len(outputs) - 1
    fake = {
        "kubectl": f'n=$(cat "$STATE/sleeps"); [ "$n" -le {last} ] || n={last}; printf "%s\\n" "$*" >> "$STATE/args"; '
        'cat "$STATE/out.$n"',
        "sleep": 'n=$(cat "$STATE/sleeps"); echo $((n + 1)) > "$STATE/sleeps"; [ "$n" -lt 10 ] || kill "$PPID"',
    }
    for name, body in fake.items():
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "STATE": str(state)}
    done = subprocess.run(["bash", "-c", line], env=env, timeout=30, capture_output=True, text=True)
    args = (state / "args").read_text().splitlines() if (state / "args").exists() else []
    return done.returncode, int((state / "sleeps").read_text()), args, done.stdout


def test_the_disaggregatedset_loop_ends_once_every_leaderworkerset_of_the_role_is_ready(tmp_path: Path) -> None:
    prefill, _ = waits_after_the_first_upgrade(text_of(DISAGG))
    outputs = [
        "1 1\n1 \n",  # one LeaderWorkerSet with no Ready group (readyReplicas left out)
        "",  # none found (deleted and not yet made again): not done
        "2 1\n1 1\n",  # one group of two still reloading
        "2 2\n1 1\n0 \n",  # all back (an old revision's scaled to 0 counts as done)
    ]
    code, sleeps, args, _ = run_wait(tmp_path, prefill, outputs)
    assert (code, sleeps) == (0, 3)
    assert len(args) == 4 and all("get leaderworkerset -l disaggregatedset.x-k8s.io/name=vllm," in a for a in args)


def test_the_jobset_loop_ends_once_every_pod_is_ready(tmp_path: Path) -> None:
    (wait,) = waits_after_the_first_upgrade(text_of(SAXML))
    outputs = ["", "True\n" * 8 + "False\n" * 8, "True\n" * 15 + "False\n", "True\n" * 16]
    code, sleeps, args, _ = run_wait(tmp_path, wait, outputs)
    assert (code, sleeps) == (0, 3)
    assert args and all("get pods -l jobset.sigs.k8s.io/jobset-name=sax-model-server-set" in a for a in args)


def test_operate_points_a_missing_role_leader_at_the_roles_leaderworkersets() -> None:
    """LWS v0.10.0's DisaggregatedSet controller writes no status (conditions included) on the DisaggregatedSet:
    the alert's row points at the role's LeaderWorkerSets, which it labels with the set's name and the role."""
    (row,) = [
        line
        for line in (ROOT / "docs" / "operate.md").read_text().splitlines()
        if line.startswith("| No `<role>` leader ready")
    ]
    assert "DisaggregatedSet's and its LeaderWorkerSets' conditions" not in row
    assert (
        "kubectl -n <ns> get leaderworkerset -l disaggregatedset.x-k8s.io/name=<set>,disaggregatedset.x-k8s.io/role=<role>"
        in row
    )


def test_the_leaderworkerset_loop_ends_on_available_not_on_a_ready_count(tmp_path: Path) -> None:
    """SRE review 32, M2: ``status.readyReplicas`` counts a canary's surge group, so ``2 2`` was read with group 0
    down and the next pool upgraded; the loop reads the ``Available`` condition, which leaves the surge group out."""
    wait = runbook.ready_again("vllm-llama70b", "vllm")
    outputs = ["", "False", "False", "True"]  # not read yet; group 0 down beside a Ready canary; still down; back
    code, sleeps, args, _ = run_wait(tmp_path, wait, outputs)
    assert (code, sleeps) == (0, 3)
    assert args and all(
        a == '-n vllm-llama70b get leaderworkerset vllm -o jsonpath={.status.conditions[?(@.type=="Available")].status}'
        for a in args
    ), args


def test_the_manual_start_waits_on_every_group_without_a_timeout_to_fall_through() -> None:
    """SRE review 34, M2: the by-hand maintenance block waited with ``kubectl wait --timeout=90m``, which on timeout
    went on to the next pool's start, whatever the stack's startup window (182 minutes for the 405B)."""
    for stack, ns, workload in (
        ("llama31-405b-v6e16", "llama405b", "jetstream-pathways"),
        ("vllm-llama33-70b-v5e16", "vllm-llama70b", "vllm"),
    ):
        section = text_of(stack).split("## TPU host maintenance", 1)[1].split("## A VM", 1)[0]
        assert "--timeout=" not in section, stack
        loop = runbook.ready_again(ns, workload)
        assert section.count(loop) >= 2, (stack, loop)
        assert section.index(loop) < section.index("perform-maintenance=true")
