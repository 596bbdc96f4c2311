"""tpu_serving_tools.e2e.node_loss.lose_one_node on ``vllm-llama33-70b-v5e16``, against the real control plane: a VM of
group 0 goes silent with no drain; the real node lifecycle controller taints it unreachable, its taint eviction
deletes group 0's pods on it after the stack's ``nodeLostSeconds`` (not the API server's 300 s default), group 1
serves throughout, and once the VM's Node is removed (GKE's repair) the real LWS controller's recreated group serves
again. Marked ``e2e``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.e2e import run
from tpu_serving_tools.e2e.controlplane import load_toolchain, toolchain_file
from tpu_serving_tools.e2e.node_loss import node_loss_lifecycle

pytestmark = pytest.mark.e2e

STACK = "vllm-llama33-70b-v5e16"
SUBJECT = "LeaderWorkerSet vllm-llama70b/vllm"


def test_lose_one_node_deletes_its_pods_after_the_toleration_and_the_group_comes_back(tmp_path: Path) -> None:
    if not toolchain_file().is_file() or not {"pulumi", "lws-manager"} <= set(load_toolchain()):
        pytest.skip("the e2e toolchain has no Pulumi CLI or LWS manager (make e2e-tools)")
    report = run.run_stack(run.Setup.load(ROOT, tmp_path), STACK, lifecycle=node_loss_lifecycle)
    print("\n".join(f.line() for f in report.findings), report.timings)
    assert not report.error, report.error
    found = {f.subject: f for f in report.findings}
    deleted = found[f"{SUBJECT}: group 0's pods on the lost VM"]
    assert deleted.ok, deleted.detail
    assert found[f"{SUBJECT}: group 1 while group 0 is lost"].ok
    (blocked,) = [f for f in report.findings if f.subject.startswith(f"{SUBJECT}: group 0 while its VM's Node")]
    assert blocked.ok, blocked.detail
    back = found[f"{SUBJECT}: group 0 serves again once the VM is repaired"]
    assert back.ok, back.detail
    assert report.ok, [f.line() for f in report.findings if not f.ok]
