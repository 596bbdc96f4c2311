"""tpu_serving_tools.e2e.canary.canary_rollout on ``vllm-llama33-70b-v5e16`` against the real LWS v0.9.0 controller:
with ``serving.canaryGroups: 1`` (the LeaderWorkerSet's ``partition`` 1) an engine image bump moves group 1, the
highest index of two, to the new template revision, and group 0 keeps the old one while the canary holds; with the
canary removed, ``pulumi up`` releases group 0 and every group ends on the new revision. Marked ``e2e``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.e2e import run
from tpu_serving_tools.e2e.canary import canary_lifecycle, with_canary
from tpu_serving_tools.e2e.controlplane import load_toolchain, toolchain_file

pytestmark = pytest.mark.e2e

STACK = "vllm-llama33-70b-v5e16"
SUBJECT = "LeaderWorkerSet vllm-llama70b/vllm"


@pytest.fixture
def toolchain() -> None:
    if not toolchain_file().is_file() or not {"pulumi", "lws-manager"} <= set(load_toolchain()):
        pytest.skip("the e2e toolchain has no Pulumi CLI or LWS manager (make e2e-tools)")


def test_canary_rollout_moves_the_highest_group_and_holds_group_0_until_released(
    toolchain: None, tmp_path: Path
) -> None:
    report = run.run_stack(run.Setup.load(ROOT, tmp_path), STACK, edit=with_canary, lifecycle=canary_lifecycle)
    found = {f.subject: f for f in report.findings}
    print("\n".join(f.line() for f in report.findings), report.timings)
    assert not report.error, report.error
    assert found[f"{SUBJECT}: scaled to 2"].ok, found[f"{SUBJECT}: scaled to 2"].detail
    moved = found[f"{SUBJECT}: group 1 moved to the new revision"]
    assert moved.ok, moved.detail
    held = found[f"{SUBJECT}: group 0 kept the old revision"]
    assert held.ok, held.detail
    partition = found[f"{SUBJECT}: leader StatefulSet partition"]
    assert partition.ok, partition.detail
    released = found[f"{SUBJECT}: released, every group on the new revision"]
    assert released.ok, released.detail
    assert report.ok, [f.line() for f in report.findings if not f.ok]
