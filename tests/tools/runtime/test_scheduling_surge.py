"""A LeaderWorkerSet rollout's surge groups in the runtime model (tools/runtime/scheduling_surge.py): each placed on
the slices beside the groups it surges from, or the rollout stalls (new-user review M1: a library program with
``rollout="surge"`` on one slice passed ``tpu-serving check``)."""

from __future__ import annotations

import copy
import functools
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import STACKS, plan_of
from tests.fixtures import library_page
from tests.fixtures.configs import plan_edited, two_slices
from tpu_serving.platform.lws import Rollout, rollout_strategy
from tpu_serving_tools.check import run_checks, summary
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.runtime.scheduling_check import scale_findings

SURGING = {
    "vllm-llama33-70b-v5e16": ("vllm-llama70b/vllm", 3, "vllm70b-v5e16s"),
    "vllm-llama33-70b-v6e8": ("vllm-llama70b/vllm", 3, "vllm70bv6e-v6e8s"),
    "vllm-llama33-70b-existing": ("llama70b-platform/vllm", 2, "tpu-v5e16-spare"),
}
"""The shipped stacks whose LeaderWorkerSet rolls with a surge group: its name, the HPA's maximum it surges from and
the spare slice that scales from zero for it."""
ONE_SLICE = "vllm-llama31-405b-v6e16"
"""One vLLM group on one fixed v6e-16 slice, no HPA: what a library program on one slice renders."""
LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"


def _surges(findings: list[Finding]) -> dict[str, Finding]:
    return {f.subject: f for f in findings if " rollout surge" in f.subject}


def _lws(plan: dict[str, Any]) -> dict[str, Any]:
    (lws,) = [r["inputs"] for r in plan["resources"] if r["type"] == LWS_TYPE]
    return lws


@pytest.mark.parametrize("stack", sorted(SURGING))
def test_scheduling_surge_shipped_stacks_land_the_surge_group_on_their_spare_slice(stack: str):
    name, at, spare = SURGING[stack]
    found = _surges(scale_findings(PlanView(plan_of(stack).as_json())))
    surge = found.pop(f"scale {name} rollout surge 1 at {at}")
    assert not found, found  # maxSurge 1: one surge group
    assert surge.ok, surge.reason
    assert re.fullmatch(
        rf"a rollout at the HPA's maximum {at}: the new revision's surge group 1 \(group {at}\) pending; slice "
        rf"{spare} provisioned \(0 -> \d+ \S+ VMs? at once\); scheduled on {spare}",
        surge.reason,
    ), surge.reason


def test_scheduling_surge_every_stack_that_surges_is_checked():
    surging = set()
    for stack in STACKS:
        plan = plan_of(stack)
        lws = [o for o in kubernetes_objects(plan) if o["kind"] == "LeaderWorkerSet"]
        rolling = [(o["spec"].get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {} for o in lws]
        if any(r.get("maxSurge", 0) for r in rolling):
            surging.add(stack)
            found = _surges(scale_findings(PlanView(plan.as_json())))
            assert found and all(f.ok for f in found.values()), (stack, found)
    if set(STACKS) >= set(SURGING):  # this project's stacks (tests/test_new_stack.py runs them with one more)
        assert surging >= set(SURGING)


# --------------------------------------------------------------------------- a program's surge on one slice


def _one_slice_surging() -> dict[str, Any]:
    """The one-slice plan with the LeaderWorkerSet as ``VllmServing(rollout=Rollout.SURGE)`` renders it."""
    plan = copy.deepcopy(plan_of(ONE_SLICE).as_json())
    _lws(plan)["spec"]["rolloutStrategy"] = rollout_strategy(Rollout.SURGE)
    return plan


def test_scheduling_surge_on_one_fixed_slice_stalls_the_rollout():
    assert not _surges(scale_findings(PlanView(plan_of(ONE_SLICE).as_json())))  # as shipped: in place, maxSurge 0
    plan = _one_slice_surging()
    assert "HorizontalPodAutoscaler" not in {o["kind"] for o in PlanView(plan).kubernetes_objects()}
    (surge,) = _surges(scale_findings(PlanView(plan))).values()
    assert surge.subject == "scale vllm-llama405b/vllm rollout surge 1 at 1"
    assert not surge.ok
    assert surge.reason.startswith(
        "the rollout stalls: at spec.replicas 1 (no HPA), the new revision's surge group 1 (group 1) stays pending "
        "(no free cloud.google.com/gke-nodepool domain holds its whole set vllm-llama405b/LeaderWorkerSet/vllm/1 (pools "
        "vllm405b-v6e16 x4; taken or too small, or host ports clash); no node pool that scales from zero takes the "
        "group (empty autoscaled pools: none)); while it is pending LWS updates no old group"
    ), surge.reason
    # what tpu-serving check prints of it: the count and the failure
    lines = summary(ONE_SLICE, run_checks(PlanView(plan)))
    assert "scale steps 0/1" in lines[0]
    assert [x for x in lines[1:] if "rollout surge" in x] == [f"  [scheduling] {surge.subject}: {surge.reason}"]


@functools.cache
def _one_slice_with_a_spare() -> dict[str, Any]:
    """The one-slice stack rolled with ``rollout: surge`` over two slices: the second a spare that scales from zero."""
    plan = plan_edited(ONE_SLICE, tpuSlices=two_slices, serving=lambda s: s.update(rollout="surge"))
    return plan.as_json()


def test_scheduling_surge_without_an_hpa_provisions_the_spare_slice():
    plan = copy.deepcopy(_one_slice_with_a_spare())
    assert _lws(plan)["spec"]["replicas"] == 1
    (surge,) = _surges(scale_findings(PlanView(plan))).values()
    assert surge.subject == "scale vllm-llama405b/vllm rollout surge 1 at 1" and surge.ok, surge.reason
    assert re.fullmatch(
        r"a rollout at spec\.replicas 1 \(no HPA\): the new revision's surge group 1 \(group 1\) pending; slice "
        r"(\S+) provisioned \(0 -> 4 ct6e-standard-4t VMs at once\); scheduled on \1",
        surge.reason,
    ), surge.reason
    # two groups (maxSurge 2): LWS caps the surge at the replicas, so still one group
    _lws(plan)["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]["maxSurge"] = 2
    assert list(_surges(scale_findings(PlanView(plan)))) == [surge.subject]


def test_scheduling_surge_percentage_rounds_up_against_the_hpa_maximum():
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v5e16").as_json())
    rolling = _lws(plan)["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]
    rolling.update(maxSurge="50%", maxUnavailable="50%")  # of 3 groups: 2 surge groups (1.5 up), 1 unavailable (down)
    found = _surges(scale_findings(PlanView(plan)))
    first, second = (
        found["scale vllm-llama70b/vllm rollout surge 1 at 3"],
        found["scale vllm-llama70b/vllm rollout surge 2 at 3"],
    )
    assert len(found) == 2
    assert first.ok and "scheduled on vllm70b-v5e16s" in first.reason
    assert not second.ok  # the one spare slice went to the first
    assert second.reason.startswith(
        "the rollout stalls: at the HPA's maximum 3, the new revision's surge group 2 (group 4) stays pending"
    )
    assert "no node pool that scales from zero takes the group (empty autoscaled pools: none)" in second.reason
    assert second.reason.endswith(
        "while it is pending LWS updates at most maxUnavailable (1) old group(s) (it counts the groups done from the "
        "highest index, the surge group's, down)"
    )


def test_scheduling_surge_that_places_no_group_fails_rather_than_counting_nothing():
    plan = _one_slice_surging()
    _lws(plan)["spec"]["replicas"] = 0  # LWS caps maxSurge at the replicas: no surge group
    found = _surges(scale_findings(PlanView(plan)))
    assert list(found) == ["scale vllm-llama405b/vllm rollout surge"]
    (missing,) = found.values()
    assert not missing.ok and missing.reason.startswith("maxSurge 1 but no surge group was placed")


# --------------------------------------------------------------------------- tpu-serving check on a program


@pytest.mark.slow
def test_scheduling_surge_library_program_on_one_slice_fails_tpu_serving_check(tmp_path: Path):
    """The reviewer's program: docs/library-api.md's building blocks and VllmServing with ``rollout=Rollout.SURGE``
    on their one v6e-8 slice, previewed and checked by the CLI."""
    example = library_page.one_slice_program()
    serving = library_page.block_with("VllmServing(")
    surging = serving.replace("        namespace=", "        rollout=Rollout.SURGE,\n        namespace=", 1)
    assert surging != serving
    (tmp_path / "Pulumi.yaml").write_text("name: my-serving\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(example + "from tpu_serving.platform.lws import Rollout\n" + surging)
    cli = [sys.executable, "-m", "tpu_serving_tools.cli"]
    check = subprocess.run([*cli, "check", "--root", str(tmp_path)], capture_output=True, text=True, check=False)
    assert check.returncode == 1, check.stdout + check.stderr
    (failure,) = [x for x in check.stdout.splitlines() if x.startswith("  [scheduling]")]
    assert re.match(r"  \[scheduling\] scale serving/\S+ rollout surge 1 at 1: the rollout stalls: ", failure), failure
    assert "no node pool that scales from zero takes the group" in failure, failure
    line = next(x for x in check.stdout.splitlines() if x.startswith("dev: "))
    assert "scale steps 0/1" in line, line


def test_scheduling_surge_peak_quota_holds_the_hpa_maximum_and_the_surge():
    """Library review 4, M4: a TPU quota of the standing slices passed the check, though the HPA could never add a
    group and a rollout at the maximum stalled."""
    import copy

    from tests.conftest import plan_of
    from tpu_serving_tools.runtime import scheduling_surge
    from tpu_serving_tools.runtime.planview import PlanView

    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    (finding,) = scheduling_surge.peak_quota_findings(PlanView(plan))
    assert finding.ok and finding.subject == "quota vllm-llama70b/tpu-serving-quota at the HPA's maximum"
    assert "with vllm at " in finding.reason and finding.reason.endswith(": fits")
    (quota,) = [r for r in plan["resources"] if r["type"] == "kubernetes:core/v1:ResourceQuota"]
    quota["inputs"]["spec"]["hard"]["requests.google.com/tpu"] = "16"  # two standing v6e-8 groups' chips
    (finding,) = scheduling_surge.peak_quota_findings(PlanView(plan))
    assert not finding.ok and finding.reason.endswith("the quota refuses the groups past it"), finding.reason


def test_scheduling_surge_peak_quota_holds_a_groups_recreate_beside_the_maximum_and_the_surge():
    """A library program that built the neighbours without the autoscaling (``neighbours(args)``, not
    ``neighbours(args, autoscaling)``) sized the quota for its two standing groups, their surge and a group's
    recreate: 100 CPU and 941Gi where the HPA's maximum of 3, the surge and the recreate need 124 CPU and 1175Gi. The
    peak held the maximum and the surge only (4 groups, 100 CPU), which the recreate headroom of the two standing
    groups covered, so it passed; the TPU likewise (32 chips)."""
    from tpu_serving_tools.runtime import scheduling_surge

    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    (finding,) = scheduling_surge.peak_quota_findings(PlanView(plan))
    assert finding.ok and finding.reason.endswith(": fits"), finding.reason
    (quota,) = [r for r in plan["resources"] if r["type"] == "kubernetes:core/v1:ResourceQuota"]
    assert quota["inputs"]["spec"]["hard"] == {
        "requests.cpu": "124", "requests.google.com/tpu": "40", "requests.memory": "1175Gi"
    }  # fmt: skip
    quota["inputs"]["spec"]["hard"].update({"requests.cpu": "100", "requests.memory": "941Gi"})  # sized for 2 groups
    (finding,) = scheduling_surge.peak_quota_findings(PlanView(plan))
    assert not finding.ok, finding.reason
    assert finding.subject == "quota vllm-llama70b/tpu-serving-quota at the HPA's maximum"
    assert "123.4 CPU > 100 CPU; 1174.2 GiB > 941.0 GiB" in finding.reason, finding.reason  # the quota rounds up
    quota["inputs"]["spec"]["hard"].update({"requests.cpu": "124", "requests.google.com/tpu": "32"})
    (finding,) = scheduling_surge.peak_quota_findings(PlanView(plan))
    assert not finding.ok and "40 TPU > 32 TPU" in finding.reason, finding.reason
