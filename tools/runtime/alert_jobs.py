"""Each alert on a scraped series names a scrape the plan makes: a PromQL matcher ``job="<name>"`` in namespace
``<ns>`` reads what a PodMonitoring ``<ns>/<name>`` (or a ClusterPodMonitoring ``<name>``) collects, since Managed
Service for Prometheus labels every series it scrapes with ``job`` = the PodMonitoring's name and ``namespace`` = the
pod's (GoogleCloudPlatform/prometheus-engine@01e7efc8 pkg/operator/apis/monitoring/v1/pod_config.go,
``PodMonitoring.endpointScrapeConfig``: ``Replacement: p.Name, TargetLabel: "job"``; ``ClusterPodMonitoring`` alike).

An alert whose job nothing scrapes reads no series: an ``absent_over_time`` arm fires for ever and a threshold never
does, and ``check`` passed it (library review 7, M1: a probe added by hand, without the exporter's scrape target).

And each HPA of a namespace with alert policies has the autoscaler-stuck one on its conditions
(:func:`autoscaler_findings`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tpu_serving_tools.runtime.gcp_facts import ALERT_POLICY
from tpu_serving_tools.runtime.planview import PlanView, qualified_name
from tpu_serving_tools.runtime.result import Finding

MATCHERS = re.compile(r"\{([^{}]*)\}")
"""A PromQL selector's label matchers."""
ADVICE = (
    "scrape it: the ScrapeTarget in ObservabilityArgs.metrics.scrape (and TenancyArgs.scrape_targets); a serving probe "
    "is added with tpu_serving.backends.probed(metrics, probe), which adds both (docs/library-api.md)"
)


def _jobs(query: str) -> Iterator[tuple[str | None, str]]:
    """(namespace or None, job) of each selector of ``query`` that names a job by equality."""
    for m in MATCHERS.finditer(query):
        job = re.search(r'\bjob="([^"]+)"', m[1])
        ns = re.search(r'\bnamespace="([^"]+)"', m[1])
        if job:
            yield (ns[1] if ns else None), job[1]


def findings(view: PlanView) -> list[Finding]:
    """One finding per alert policy and job its conditions read: a PodMonitoring of that name in that namespace."""
    monitors = {
        (str(o["metadata"].get("namespace", "default")), str(o["metadata"]["name"]))
        for o in view.kubernetes_objects("PodMonitoring")
    }
    cluster_wide = {str(o["metadata"]["name"]) for o in view.kubernetes_objects("ClusterPodMonitoring")}
    seen: dict[str, Finding] = {}
    for r in view.of_type(ALERT_POLICY):
        for c in r["inputs"].get("conditions") or ():
            query = str((c.get("conditionPrometheusQueryLanguage") or {}).get("query", ""))
            for ns, job in _jobs(query):
                subject = f"ref AlertPolicy {r['name']} -> PodMonitoring {ns or '<any namespace>'}/{job}"
                ok = (job in cluster_wide or (ns, job) in monitors) if ns else any(j == job for _, j in monitors)
                seen[subject] = Finding(
                    subject,
                    ok,
                    "scraped by it"
                    if ok
                    else "no PodMonitoring of that name in the plan: the alert reads series nothing writes (an absence "
                    f"alert fires for ever, a threshold never); {ADVICE}",
                )
    return list(seen.values())


def picker_findings(view: PlanView) -> list[Finding]:
    """Each InferencePool's endpoint picker (the pods behind its ``endpointPickerRef`` Service) is scraped by a
    PodMonitoring of its namespace (library review 8, M4: a program that left out ``routed()`` had its picker
    unscraped and unalerted, and every check passed; a picker that stops picking is then seen only by the clients)."""
    from tpu_serving_tools.runtime.network_policy import selector_matches
    from tpu_serving_tools.runtime.pods import pods_of

    services = {(qualified_name(o)): o for o in view.kubernetes_objects("Service")}
    monitors = list(view.kubernetes_objects("PodMonitoring"))
    pods, out = pods_of(view), []
    for pool in view.kubernetes_objects("InferencePool"):
        ns = str(pool["metadata"].get("namespace", "default"))
        picker = str(((pool.get("spec") or {}).get("endpointPickerRef") or {}).get("name"))
        selector = ((services.get(f"{ns}/{picker}") or {}).get("spec") or {}).get("selector")
        if not selector:
            continue  # a picker Service of nothing: the references say so
        chosen = [p for p in pods if p.namespace == ns and selector_matches({"matchLabels": selector}, p.labels)]
        scraped = sorted(
            str(m["metadata"]["name"])
            for m in monitors
            if str(m["metadata"].get("namespace", "default")) == ns
            and any(selector_matches((m.get("spec") or {}).get("selector") or {}, p.labels) for p in chosen)
        )
        out.append(
            Finding(
                f"ref InferencePool {qualified_name(pool)} endpoint picker {picker} -> PodMonitoring",
                bool(scraped),
                f"scraped by {', '.join(scraped)}"
                if scraped
                else "no PodMonitoring scrapes its pods: its errors and its readiness go unalerted; add its scrape target "
                "and alerts with tpu_serving.operations.serving_metrics.routed(metrics, gateway_args) (docs/library-api.md)",
            )
        )
    return out


STUCK_METRIC = "kube_horizontalpodautoscaler_status_condition"
"""The series the autoscaler-stuck alert reads (:mod:`tpu_serving.operations.alerts.autoscaler_alerts`, ``METRIC``)."""
STUCK_ADVICE = (
    "build the serving's metrics with its autoscaling (neighbours(args, autoscaling), whose metrics carry the HPA in "
    "ServingMetrics.autoscalers), or name the HPA in ObservabilityArgs.metrics.autoscalers (docs/library-api.md)"
)


def _stuck_alerts(view: PlanView) -> tuple[set[str], set[tuple[str, str]]]:
    """(namespaces the alert policies' PromQL selectors name, (namespace, HPA) of each autoscaler-stuck selector)."""
    alerted: set[str] = set()
    watched: set[tuple[str, str]] = set()
    for r in view.of_type(ALERT_POLICY):
        for c in r["inputs"].get("conditions") or ():
            query = str((c.get("conditionPrometheusQueryLanguage") or {}).get("query", ""))
            for m in MATCHERS.finditer(query):
                ns = re.search(r'\bnamespace="([^"]+)"', m[1])
                hpa = re.search(r'\bhorizontalpodautoscaler="([^"]+)"', m[1])
                if ns:
                    alerted.add(ns[1])
                if ns and hpa and query[: m.start()].endswith(STUCK_METRIC):
                    watched.add((ns[1], hpa[1].replace("\\\\.", ".")))
    return alerted, watched


def autoscaler_findings(view: PlanView) -> list[Finding]:
    """Each HPA of a namespace whose alert policies watch it is watched by the autoscaler-stuck alert too (library
    review: a program that built its neighbours without the autoscaling, ``neighbours(args)``, deployed its HPA with
    no alert on its conditions, and every check passed; an HPA that reads no metric then holds the groups at their
    minimum under any load, silently). A namespace no alert policy names is left out: it has no Observability."""
    alerted, watched = _stuck_alerts(view)
    out = []
    for hpa in view.kubernetes_objects("HorizontalPodAutoscaler"):
        ns, name = str(hpa["metadata"].get("namespace", "default")), str(hpa["metadata"]["name"])
        if ns not in alerted:
            continue
        ok = (ns, name) in watched
        out.append(
            Finding(
                f"ref HorizontalPodAutoscaler {ns}/{name} -> AlertPolicy autoscaler-stuck",
                ok,
                f"its {STUCK_METRIC} conditions alerted"
                if ok
                else f"namespace {ns} has alert policies but none on this HPA's conditions (autoscaler-stuck): an HPA "
                f"that reads no metric holds the groups where they are, unalerted; {STUCK_ADVICE}",
            )
        )
    return out
