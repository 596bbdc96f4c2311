"""Each HPA that scales on a vLLM metric (``vllm:...``) names one the pinned engine exports: the metrics of vLLM's
v1 Prometheus logger, read from the published vllm-tpu wheel (``tables/vllm-<v>.json`` ``metrics``,
:func:`tpu_serving_tools.conformance.extract_vllm.logger_metrics`).

The HPA names a Managed Prometheus metric ``prometheus.googleapis.com|<metric>|<kind>``
(:func:`tpu_serving.operations.autoscaling.managed_prometheus_metric`); a ``<metric>`` the engine never exports (a typo such as
``vllm:num_requests_waitng``) is served by no adapter, the HPA's ``ScalingActive`` stays False and it never scales
(library review). The stack file's and the components' validation refuse only a name shaped like no gauge
(:func:`tpu_serving.operations.autoscaling.metric_problem`): the library cannot import these tables, and holds no complete list of
its own.

Only the v1 logger's names are tabled: a metric that a KV connector, speculative decoding or another module of the
wheel registers is not (:data:`~tpu_serving_tools.conformance.extract_vllm.METRICS_FILE`), and an HPA on one fails
here too. JetStream's metrics (``jetstream_...``) have no table: they are JetStream's
(``jetstream/core/metrics/prometheus.py``), not MaxText's, whose revision in the jetstream-pathways image is not
published (:mod:`.extract_maxtext`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from tpu_serving_tools.conformance.vllm import PINS, tables
from tpu_serving_tools.runtime.metrics_adapter import MANAGED_PROMETHEUS
from tpu_serving_tools.runtime.planview import PlanView, qualified_name
from tpu_serving_tools.runtime.result import Finding

PREFIX = "vllm:"
"""vLLM's metric names (``vllm/v1/metrics/loggers.py``: every one it registers starts so)."""


def hpa_metrics(hpa: Mapping[str, Any]) -> Iterator[str]:
    """The Prometheus metric each Pods, Object or External metric of ``hpa`` names (``<metric>`` of a
    ``prometheus.googleapis.com|<metric>|<kind>``, or the name as written)."""
    for spec in (hpa.get("spec") or {}).get("metrics") or ():
        source = spec.get({"Pods": "pods", "Object": "object", "External": "external"}.get(str(spec.get("type")), ""))
        name = str(((source or {}).get("metric") or {}).get("name", ""))
        parts = name.split("|")
        yield parts[1] if len(parts) == 3 and parts[0] == MANAGED_PROMETHEUS else name


def closest(metric: str, known: Mapping[str, str]) -> str:
    """The known names nearest ``metric`` (difflib), each with its kind, or the table's gauges."""
    near = difflib.get_close_matches(metric, list(known), n=3, cutoff=0.6)
    if near:
        return "closest: " + ", ".join(f"{m} ({known[m]})" for m in near)
    return "its gauges: " + ", ".join(sorted(m for m, k in known.items() if k == "gauge"))


def findings(view: PlanView) -> list[Finding]:
    """Per HPA metric named ``vllm:...``: the pinned vLLM's v1 metrics logger exports it."""
    known = tables().vllm.metrics
    release = f"vllm {PINS.vllm_tpu} (tables/vllm-{PINS.vllm_tpu}.json)"
    out = []
    for hpa in view.kubernetes_objects("HorizontalPodAutoscaler"):
        for metric in hpa_metrics(hpa):
            if not metric.startswith(PREFIX):
                continue
            subject = f"engine {qualified_name(hpa)} HorizontalPodAutoscaler metric {metric}"
            if metric in known:
                out.append(Finding(subject, True, f"a {known[metric]} of {release}"))
                continue
            out.append(
                Finding(
                    subject,
                    False,
                    f"{release} exports no {metric} (its v1 metrics logger's {len(known)} names): no adapter serves "
                    f"it and the HPA never scales; {closest(metric, known)}",
                )
            )
    return out
