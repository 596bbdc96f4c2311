"""tpu_serving_tools.e2e.rollout.image_rollout on a whole stack, against the real API server's ResourceQuota
admission: ``vllm-llama33-70b-v5e16`` (a surge rollout of two groups of four 24-CPU pods). With the namespace quota
lowered to 250 CPU on the live cluster after ``pulumi up`` (planted: the stack file's validation refuses a figure
below the plan's peak), the two groups fit but the surge group beside them does not: the surge pods are refused, the
rollout never completes, and the finding carries the StatefulSet controller's event. With the quota at the figure the
library derives from the plan (:mod:`tpu_serving.common.quota`, every workload at its maximum plus one rollout's surge), the
rollout completes with no group lost. ``make e2e`` runs the shipped stack (its own quota, above the derived one).
Marked ``e2e``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tpu_serving.common.quota import derive
from tpu_serving.config import load_stack_config
from tpu_serving.config.checks import namespace_pods
from tpu_serving_tools.e2e import run
from tpu_serving_tools.e2e.controlplane import load_toolchain, toolchain_file
from tpu_serving_tools.preview.stack_files import load_project, stack_config

pytestmark = pytest.mark.e2e

STACK = "vllm-llama33-70b-v5e16"
NAMESPACE, QUOTA = "vllm-llama70b", "tpu-serving-quota"


def set_cpu_quota(cpu: str) -> Callable[[Any], None]:
    """A ``before_rollout`` that sets the live namespace quota's ``requests.cpu`` to ``cpu``."""

    def patch(api: Any) -> None:
        from kubernetes import client

        body = {"spec": {"hard": {"requests.cpu": cpu}}}
        client.CoreV1Api(api).patch_namespaced_resource_quota(QUOTA, NAMESPACE, body)

    return patch


def derived_cpu() -> str:
    return derive(namespace_pods(load_stack_config(stack_config(load_project(ROOT), STACK)))).total.cpu_text


def stack_file_cpu() -> int:
    """The CPU quota the shipped stack file sets (``tenancy.quota.cpu``)."""
    quota = load_stack_config(stack_config(load_project(ROOT), STACK)).tenancy.quota
    assert quota is not None and quota.cpu is not None, "the shipped stack sets its own quota"
    return int(quota.cpu)


@pytest.fixture
def toolchain() -> None:
    if not toolchain_file().is_file() or not {"pulumi", "lws-manager"} <= set(load_toolchain()):
        pytest.skip("the e2e toolchain has no Pulumi CLI or LWS manager (make e2e-tools)")


def test_image_rollout_stalls_on_a_quota_below_the_surge(toolchain: None, tmp_path: Path) -> None:
    report = run.run_stack(run.Setup.load(ROOT, tmp_path), STACK, before_rollout=set_cpu_quota("250"))
    failed = {f.subject: f.detail for f in report.findings if not f.ok}
    # everything else passes: the two groups fit, so up, verify, the scale to two and destroy do
    assert list(failed) == ["LeaderWorkerSet vllm-llama70b/vllm: to completion"], failed
    detail = failed["LeaderWorkerSet vllm-llama70b/vllm: to completion"]
    assert "still on the old revision" in detail
    assert "exceeded quota: tpu-serving-quota" in detail and "limited: requests.cpu=250" in detail
    floor = next(f for f in report.findings if "serving floor" in f.subject)
    assert floor.ok  # surge: the old groups keep serving while the surge group waits
    # SRE review round 24, m2: every old group Ready, and tpu-serving verify's rollout check still fails, from the
    # real LWS controller's conditions
    check = next(f for f in report.findings if f.subject.endswith("tpu-serving verify's rollout check"))
    assert check.ok and check.detail.startswith("fails (rollout in progress (UpdateInProgress): "), check


def test_image_rollout_completes_at_the_derived_quota(toolchain: None, tmp_path: Path) -> None:
    cpu = derived_cpu()
    assert int(cpu) < stack_file_cpu()  # below the stack file's own figure: the derived one is what is shown to hold
    report = run.run_stack(run.Setup.load(ROOT, tmp_path), STACK, before_rollout=set_cpu_quota(cpu))
    failed = {f.subject: f.detail for f in report.findings if not f.ok}
    assert failed == {}, failed
    assert any(f.subject == "LeaderWorkerSet vllm-llama70b/vllm: to completion" for f in report.findings)
    check = next(f for f in report.findings if f.subject.endswith("tpu-serving verify's rollout check"))
    assert check.detail.startswith("passes (2 of 2 groups on the latest revision, 2 ready)"), check
