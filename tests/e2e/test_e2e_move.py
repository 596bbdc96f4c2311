"""tpu_serving_tools.e2e.move on ``vllm-llama33-70b-v6e8``, against the real control plane: the move of a group
before its host-maintenance window (docs/operate.md, "Moving a group before its window"), with the selectors that
``tpu-serving runbook`` prints for the stack. Without the zone hold, an added group in the first window's zone
leaves the drained group Pending (GKE review round 52, M1, on the real scheduler); with the runbook's hold, the added
group serves in the other zone, the drained group serves again in its own zone on another pool, and the other two
groups serve throughout. Marked ``e2e``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, plan_of
from tpu_serving_tools.e2e import run
from tpu_serving_tools.e2e.controlplane import load_toolchain, toolchain_file
from tpu_serving_tools.e2e.move import move_lifecycle, zone_holds
from tpu_serving_tools.runbook import command as runbook

pytestmark = pytest.mark.e2e

STACK = "vllm-llama33-70b-v6e8"
SUBJECT = "LeaderWorkerSet vllm-llama70b/vllm"


def test_zone_holds_reads_one_block_per_zone_from_the_runbook() -> None:
    holds = zone_holds(runbook.render(plan_of(STACK).as_json()))
    assert sorted(holds) == ["us-east5-a", "us-east5-b"]
    a = holds["us-east5-a"]
    assert a.selector == "cloud.google.com/gke-nodepool in (vllm70bv6e-v6e8a,vllm70bv6e-v6e8c)"
    assert a.drains == {
        "vllm70bv6e-v6e8a": "cloud.google.com/gke-nodepool=vllm70bv6e-v6e8a",
        "vllm70bv6e-v6e8c": "cloud.google.com/gke-nodepool=vllm70bv6e-v6e8c",
    }


def test_move_before_window_keeps_two_groups_serving_with_the_runbooks_zone_hold(tmp_path: Path) -> None:
    if not toolchain_file().is_file() or not {"pulumi", "lws-manager"} <= set(load_toolchain()):
        pytest.skip("the e2e toolchain has no Pulumi CLI or LWS manager (make e2e-tools)")
    lifecycle = move_lifecycle(runbook.render(plan_of(STACK).as_json()))
    report = run.run_stack(run.Setup.load(ROOT, tmp_path), STACK, lifecycle=lifecycle)
    print("\n".join(f.line() for f in report.findings), report.timings)
    assert not report.error, report.error
    found = {f.subject: f for f in report.findings}
    expected = [
        f"{SUBJECT}: without the zone hold: group 2 in group 0's zone",
        f"{SUBJECT}: without the zone hold: group 0 waits Pending after the drain (the hazard the hold prevents)",
        f"{SUBJECT}: without the zone hold: group 0 serves again once its own slice is back, and group 2 leaves",
        f"{SUBJECT}: the runbook's move: the hold selects group 0's node",
        f"{SUBJECT}: the runbook's move: groups 1 and 2 serve throughout",
    ]
    for subject in expected:
        assert subject in found, (subject, sorted(found))
        assert found[subject].ok, found[subject].line()
    (outside,) = [f for f in report.findings if f.subject.startswith(f"{SUBJECT}: the runbook's move: group 2 serves")]
    assert outside.ok, outside.line()
    (moved,) = [f for f in report.findings if f.subject.startswith(f"{SUBJECT}: the runbook's move: group 0 serves")]
    assert moved.ok, moved.line()
    assert report.ok, [f.line() for f in report.findings if not f.ok]
