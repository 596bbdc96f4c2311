"""tpu_serving_tools.e2e.drain.drain_one_group on a whole stack, with a planted break: ``vllm-llama33-70b-v5e16``
scaled to two groups, its PodDisruptionBudget deleted before the drain. The real API server then allows an
eviction from the second group while the first is down: both groups go at once. ``make e2e`` runs the shipped
stack, where the API server refuses that eviction (429) until the first group serves again.

And ``move_one_group`` with a second break: every node pool fixed at its size, as the kept slices were before
they autoscaled down to zero. The real scheduler moves group 0 to a free slice all the same, and the pool it left
then keeps its VMs. Marked ``e2e``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.e2e import drain, run
from tpu_serving_tools.e2e.controlplane import load_toolchain, toolchain_file
from tpu_serving_tools.verify.checks import Finding

pytestmark = pytest.mark.e2e

STACK = "vllm-llama33-70b-v5e16"
BUDGET = "PodDisruptionBudget vllm-llama70b/vllm"
GROUP_0 = "LeaderWorkerSet vllm-llama70b/vllm: group 0 off its slice"


def without_the_budget(api_client: Any, target: tuple[str, str], timeout: float = 90.0) -> list[Finding]:
    from kubernetes import client

    namespace, name = target
    client.PolicyV1Api(api_client).delete_namespaced_pod_disruption_budget(name, namespace)
    return drain.drain_one_group(api_client, target, timeout)


def with_fixed_pools(
    api_client: Any, target: tuple[str, str], lowest: dict[str, int], reserved: frozenset[str], timeout: float = 90.0
) -> list[Finding]:
    fixed = {pool: 4 for pool in lowest}  # a v5e 4x4: 4 VMs
    return drain.move_one_group(api_client, target, fixed, reserved, timeout=timeout)


def test_drain_one_group_without_the_budget_takes_both_groups_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not toolchain_file().is_file() or not {"pulumi", "lws-manager"} <= set(load_toolchain()):
        pytest.skip("the e2e toolchain has no Pulumi CLI or LWS manager (make e2e-tools)")
    monkeypatch.setattr(run, "drain_one_group", without_the_budget)
    monkeypatch.setattr(run, "move_one_group", with_fixed_pools)
    report = run.run_stack(run.Setup.load(ROOT, tmp_path), STACK)
    failed = {f.subject: f.detail for f in report.findings if not f.ok}
    moved = f"{GROUP_0}: the slice it left"
    assert [s for s in failed if not s.startswith(moved)] == [
        f"{BUDGET}: status",
        f"{BUDGET}: a pod of group 1 while group 0 is down",
    ], failed
    (left,) = [s for s in failed if s.startswith(moved)]
    assert failed[left] == "its pool keeps 4 VMs: they bill idle while group 0 serves elsewhere"
    went = next(f for f in report.findings if f.subject == GROUP_0)
    assert went.ok and went.detail.startswith("from pool vllm70b-v5e16"), went.detail
    assert failed[f"{BUDGET}: a pod of group 1 while group 0 is down"] == "allowed: both groups disrupted at once"
    drained = next(f for f in report.findings if f.subject == f"{BUDGET}: group 0's pods, each evicted once")
    assert drained.ok and drained.detail.startswith("allowed vllm-0")
