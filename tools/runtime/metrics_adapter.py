"""The Custom Metrics Stackdriver Adapter behind every HPA that scales on a Pods or External metric.

An HPA reads such a metric through the ``custom.metrics.k8s.io`` / ``external.metrics.k8s.io`` APIs, which nothing
serves until the adapter is installed; and the adapter reads Cloud Monitoring only when its Kubernetes service account
``custom-metrics/custom-metrics-stackdriver-adapter`` holds ``roles/monitoring.viewer``
(https://cloud.google.com/stackdriver/docs/managed-prometheus/hpa, 'Use the Custom Metrics Stackdriver Adapter',
steps 2 and 4). Without it the HPA's metric is never read and it never scales: the scale path the scheduling model
draws cannot happen (library review 6, M3).
"""

from __future__ import annotations

from collections.abc import Iterator

from tpu_serving_tools.runtime.existing import declared_existing, existing_cluster, manifest_addresses
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import Finding

ADAPTER_MANIFEST = "custom-metrics-stackdriver-adapter"
ADAPTER_PRINCIPAL = "subject/ns/custom-metrics/sa/custom-metrics-stackdriver-adapter"
MONITORING_VIEWER = "roles/monitoring.viewer"
MANAGED_PROMETHEUS = "prometheus.googleapis.com"
"""A Managed Prometheus metric is named ``prometheus.googleapis.com|<metric>|<kind>`` to the HPA
(GoogleCloudPlatform/k8s-stackdriver@cm-sd-adapter-v0.16.9
custom-metrics-stackdriver-adapter/examples/prometheus-to-sd/README.md)."""
ADAPTED_METRICS = frozenset({"Pods", "Object", "External"})
"""The HPA metric types read through the custom or external metrics APIs (autoscaling/v2 MetricSpec: ``Resource`` and
``ContainerResource`` come from the resource metrics API, metrics-server, which GKE runs)."""


def _existing_by_settings(view: PlanView) -> bool:
    """Whether the stack file says the cluster runs the adapter already: ``serving.autoscaling.adapterInstall:
    existing``, unset on an existing cluster, or a disaggregated role's (both roles agree, the library refuses them
    otherwise)."""
    serving = view.setting("serving") or {}
    modes = [(serving.get("autoscaling") or {}).get("adapterInstall")]
    modes += [
        ((r or {}).get("autoscaling") or {}).get("adapterInstall")
        for r in (serving.get("disaggregation") or {}).values()
    ]
    if "existing" in modes:
        return True
    return bool(serving) and existing_cluster(view) is not None and modes[0] is None


def _recorded_existing(view: PlanView) -> bool:
    """A ``ControllerInstall`` of the adapter that owns nothing (``owned=False``): the program's precondition that the
    cluster runs it."""
    return any(
        str(r["type"]).endswith(":ControllerInstall")
        and (r.get("registeredOutputs") or {}).get("owned") is False
        and ADAPTER_MANIFEST in str((r.get("registeredOutputs") or {}).get("upstream"))
        for r in view.resources
    )


def problem(view: PlanView) -> str | None:
    """Why no adapter serves the HPAs' metrics (None: one is installed, or the cluster runs it, and it may read Cloud
    Monitoring)."""
    installed = any(ADAPTER_MANIFEST in address for address in manifest_addresses(view))
    if not installed and not _existing_by_settings(view) and not _recorded_existing(view):
        return (
            "no Custom Metrics Stackdriver Adapter in the plan: the HPA's metric is never served; install it "
            "(ControllerInstall of tpu_serving.operations.autoscaling.METRICS_ADAPTER, owned=False when the cluster runs it)"
        )
    viewer = any(
        r["inputs"].get("role") == MONITORING_VIEWER and ADAPTER_PRINCIPAL in str(r["inputs"].get("member"))
        for r in view.resources
        if r["type"].startswith("gcp:projects/iAM")
    ) or any(  # named existing by the stack (serving...autoscaling.adapterIam: existing), as the preview lists it
        ADAPTER_PRINCIPAL in need and MONITORING_VIEWER in need
        for e in declared_existing(view, "IAM grant")
        for need in e.get("needs") or ()
    )
    # a model stack's adapter and its grant are its platform stack's (sharedPlatform.metricsAdapterIam)
    platform = isinstance(view.setting("platform"), dict)
    return (
        None
        if viewer or platform
        else f"the adapter's service account holds no {MONITORING_VIEWER}: it reads no metric"
    )


def findings(view: PlanView) -> Iterator[Finding]:
    """Per HPA with a Pods, Object or External metric: the adapter serves it."""
    why = problem(view)
    for hpa in view.kubernetes_objects("HorizontalPodAutoscaler"):
        kinds = sorted({str(m.get("type")) for m in (hpa.get("spec") or {}).get("metrics") or ()} & ADAPTED_METRICS)
        if not kinds:
            continue
        meta = hpa["metadata"]
        subject = f"metrics adapter for HorizontalPodAutoscaler {meta.get('namespace', 'default')}/{meta['name']}"
        yield Finding(subject, why is None, why or f"its {', '.join(kinds)} metrics served by the adapter")
