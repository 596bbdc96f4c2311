"""tpu_serving_tools.e2e.rollout.image_rollout on a whole stack, with a planted break: ``vllm-llama33-70b-v5e16``
(a surge rollout of two groups of four 24-CPU pods) with its namespace quota at 250 CPU, which admits the two
groups but not the surge group beside them. The real API server's ResourceQuota admission refuses the surge pods,
the rollout never completes, and the finding carries the StatefulSet controller's event. ``make e2e`` runs the
shipped stack (quota 420), whose rollout completes with no group lost. Marked ``e2e``."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tpu_serving_tools.e2e import run
from tpu_serving_tools.e2e.controlplane import load_toolchain, toolchain_file

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
STACK = "vllm-llama33-70b-v5e16"


def quota_below_the_surge(config: dict[str, Any]) -> dict[str, Any]:
    edited = copy.deepcopy(config)
    edited["tenancy"]["quota"]["cpu"] = "250"
    return edited


def test_image_rollout_stalls_on_a_quota_below_the_surge(tmp_path: Path) -> None:
    if not toolchain_file().is_file() or not {"pulumi", "lws-manager"} <= set(load_toolchain()):
        pytest.skip("the e2e toolchain has no Pulumi CLI or LWS manager (make e2e-tools)")
    report = run.run_stack(run.Setup.load(ROOT, tmp_path), STACK, quota_below_the_surge)
    failed = {f.subject: f.detail for f in report.findings if not f.ok}
    # everything else passes: the two groups fit, so up, verify, the scale to two and destroy do
    assert list(failed) == ["LeaderWorkerSet vllm-llama70b/vllm: to completion"], failed
    detail = failed["LeaderWorkerSet vllm-llama70b/vllm: to completion"]
    assert "still on the old revision" in detail
    assert "exceeded quota: tpu-serving-quota" in detail and "limited: requests.cpu=250" in detail
    floor = next(f for f in report.findings if "serving floor" in f.subject)
    assert floor.ok  # surge: the old groups keep serving while the surge group waits
