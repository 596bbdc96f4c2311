"""A kwok Stage for what a kubelet does and kwok's default Stages leave out: it reports a running pod Ready again after
the node lifecycle controller marked it NotReady.

The race, in k8s.io/kubernetes v1.36.3: the node lifecycle controller queues a pod when it is bound to a node
(``pkg/controller/nodelifecycle/node_lifecycle_controller.go`` l.1070-1078, ``podUpdated``), and marks it NotReady
when its cached view of that node (``nodeHealthMap``, refreshed each node-monitor period) is not Ready (l.1134-1140,
``processPod``; ``MarkPodsNotReady``, ``pkg/controller/util/node/controller_utils.go`` l.121). A pod bound to a node
that has just come back (a VM back from silence, a zone back from an outage) can be marked so after kwok has made it
Ready. A kubelet then sends its own status again: its status manager reconciles every ``syncPeriod`` (10 s,
``pkg/kubelet/status/status_manager.go`` l.209) any pod whose status on the API server differs from its own
(``needsReconcile``, l.1269-1299), since "kubelet should be the source of truth of pod status" (l.1264). kwok's ``pod-ready``
Stage selects Pending pods only (kwok v0.8.0 ``kustomize/stage/pod/fast/pod-ready.yaml``), so without this Stage the
pod stays Running and not Ready for good, which no cluster does.

The Stage is applied by kwok only to pods on the Nodes it manages: a silenced VM's pods are left as the node lifecycle
controller marked them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

STATUS_SYNC_STAGE = "pod-ready-again"
SYNC_PERIOD_MS = 10_000
"""The kubelet status manager's ``syncPeriod`` (status_manager.go l.209): the Stage's pod is NotReady for up to this
long, a uniform delay in [0, 10 s] (kwok's ``jitterDurationMilliseconds``)."""

_TEMPLATE = """\
conditions:
- lastTransitionTime: {{ Now | Quote }}
  status: "True"
  type: Ready
- lastTransitionTime: {{ Now | Quote }}
  status: "True"
  type: ContainersReady
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  ready: true
{{ end }}
"""
"""The status patch: kwok sends a Pod's ``statusTemplate`` as a strategic merge patch of its ``status`` (kwok v0.8.0
``pkg/utils/lifecycle/next.go`` l.152-159; its ``statusTemplate`` becomes a patch with ``Root: "status"``,
``pkg/apis/internalversion/conversion.go`` l.443-450), so the conditions merge by ``type`` and the container statuses by
``name``; the rest of the status is kept."""


def status_sync_stage(folder: Path, skipped_namespaces: Sequence[str] = ()) -> Path:
    """The Stage, written to ``folder``: a Running pod not being deleted whose ``Ready`` condition is not True is made
    Ready again, after up to :data:`SYNC_PERIOD_MS`. Pods of ``skipped_namespaces`` (those whose readiness a stand-in
    process's probe reports: :class:`.controllers.Prober`) are left alone."""
    expressions: list[dict[str, Any]] = [
        {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
        {"key": ".status.phase", "operator": "In", "values": ["Running"]},
        {
            "key": '.status.conditions.[] | select( .type == "Ready" ) | .status',
            "operator": "NotIn",
            "values": ["True"],
        },
    ]
    if skipped_namespaces:
        expressions.append({"key": ".metadata.namespace", "operator": "NotIn", "values": list(skipped_namespaces)})
    stage = {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": STATUS_SYNC_STAGE},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {"matchExpressions": expressions},
            "delay": {"durationMilliseconds": 0, "jitterDurationMilliseconds": SYNC_PERIOD_MS},
            "next": {"statusTemplate": _TEMPLATE},
        },
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{STATUS_SYNC_STAGE}.yaml"
    path.write_text(yaml.safe_dump(stage, sort_keys=False))
    return path
