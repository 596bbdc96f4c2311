"""tpu_serving_tools.e2e.status_sync.status_sync_stage on a real control plane: a Node goes silent, the real node
lifecycle controller marks its pods NotReady, the Node comes back, and the pod the Stage covers is Ready again, as a
kubelet's status sync makes it; the pod of a namespace the Stage skips (a stand-in whose readiness its prober reports)
stays NotReady, which is what every pod did without the Stage (the zone-outage run's group 0, CI of stop 52). Marked
``e2e``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import require_toolchain
from tpu_serving_tools.e2e import controllers, nodes
from tpu_serving_tools.e2e.controlplane import (
    KWOK_LABEL,
    ControlPlane,
    load_toolchain,
    toolchain_stages,
)
from tpu_serving_tools.e2e.kube import Kube, Obj, wait_for
from tpu_serving_tools.e2e.status_sync import SYNC_PERIOD_MS
from tpu_serving_tools.verify.checks import pod_is_ready

pytestmark = pytest.mark.e2e

POOL = nodes.Pool("cpu", "n2-standard-8", "us-west4-a", initial_nodes=1, max_nodes=1)
SKIPPED = "probed"
"""A namespace the Stage skips, as ``make e2e`` skips the controllers' namespaces."""


def _pod(kube: Kube, namespace: str) -> Obj:
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    wait_for(f"service account default in {namespace}",
             lambda: kube.find("v1", "ServiceAccount", "default", namespace), timeout=30)  # fmt: skip
    return kube.create({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "server", "namespace": namespace},
        "spec": {"containers": [{"name": "server", "image": "example.invalid/server:1"}]},
    })  # fmt: skip


def _ready(kube: Kube, pod: Obj) -> bool:
    return pod_is_ready(kube.get("v1", "Pod", pod["metadata"]["name"], pod["metadata"]["namespace"]))


def _running(kube: Kube, pod: Obj) -> bool:
    found = kube.get("v1", "Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
    return (found.get("status") or {}).get("phase") == "Running"


def test_e2e_status_sync_stage_readies_a_pod_the_node_controller_marked_not_ready(tmp_path: Path) -> None:
    require_toolchain()
    stages = controllers.kubelet_stages(toolchain_stages(), tmp_path / "stages", [SKIPPED])
    with ControlPlane(run_timeout=600, tools=load_toolchain(), stages=stages) as cp:
        (node,) = nodes.create_nodes(cp, POOL)
        covered, skipped = _pod(cp.kube, "work"), _pod(cp.kube, SKIPPED)
        wait_for("the covered pod Ready", lambda: _ready(cp.kube, covered), timeout=60)
        wait_for("the skipped pod Running", lambda: _running(cp.kube, skipped), timeout=60)
        controllers.report_ready(cp.kube, skipped, True)
        assert _ready(cp.kube, skipped)

        cp.kube.patch(node, {"metadata": {"labels": {KWOK_LABEL[0]: None}}})
        wait_for("both pods marked NotReady by the node lifecycle controller",
                 lambda: not _ready(cp.kube, covered) and not _ready(cp.kube, skipped), timeout=180)  # fmt: skip
        cp.kube.patch(node, {"metadata": {"labels": {KWOK_LABEL[0]: KWOK_LABEL[1]}}})

        wait_for("the covered pod Ready again", lambda: _ready(cp.kube, covered), timeout=SYNC_PERIOD_MS / 1000 + 30)
        assert not _ready(cp.kube, skipped), "a pod the Stage skips was made Ready: the planted check cannot fail"
