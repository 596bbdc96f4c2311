"""Every alert policy of every stack's plan, run by a real PromQL engine: Prometheus' ``promtool`` (v0.316.0, release
3.16.0, built by the e2e toolchain, pin ``go-prometheus``). Marked ``e2e`` (it needs the toolchain's binary).

For each stack, every ``AlertPolicy`` condition with ``conditionPrometheusQueryLanguage`` becomes a Prometheus
alerting rule (``expr`` the query, ``for`` its ``duration``, the group's ``interval`` its ``evaluationInterval``);
``promtool check rules`` parses them, and ``promtool test rules`` evaluates each against two inputs:

- a healthy one, where it must not fire at any checked time;
- an outage, after a healthy quarter of an hour, where it must not yet fire before its duration has passed and must
  fire after it.

The inputs are not taken from the queries. The pods are the ones the stack's controllers create, named as upstream
names them (cited in :func:`pods`), from the workloads of the plan; the series are those upstream exports, with
its metric and label names (cited at each family below) and the labels Managed Prometheus adds to every series it
ingests: ``cluster`` and ``namespace``, and ``job`` the PodMonitoring's name (GoogleCloudPlatform/prometheus-engine
v0.17.2 pkg/operator/apis/monitoring/v1/pod_config.go l.180-190; ``pod`` from the target's metadata, l.41). Which
outage an alert gets follows from the upstream metric families it reads (:data:`FAMILIES`), not from its name, so
an alert added later is picked up; one that reads a metric no family provides fails the test until its input is
added or it is listed in :data:`NOT_COVERED` with the reason. A stack whose count of alerts checked drops below
:data:`CHECKED_AT_LEAST` fails too.

What this does not show: Cloud Monitoring's PromQL is evaluated by Cloud Monitoring, not by Prometheus
(https://cloud.google.com/stackdriver/docs/managed-prometheus/promql-differences: partly evaluated by Monarch,
at parity with Prometheus 2.44 but for the differences it lists), and the series names of
GKE's own metrics (``kubernetes_io:...``) exist only there.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import PLATFORM_STACKS, STACKS, plan_of
from tpu_serving_tools.e2e.controlplane import load_toolchain, toolchain_file, toolchain_files
from tpu_serving_tools.preview.offline import Plan

pytestmark = pytest.mark.e2e

ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
HEALTHY_MINUTES = 15
"""How long every outage input is healthy before the outage starts."""
SLACK_MINUTES = 15
"""How long after the outage start plus the alert's duration it must be firing (rate windows and one evaluation)."""

NOT_COVERED: dict[str, str] = {
    "group-recreations": "a conditionThreshold on a log-based metric (a Cloud Monitoring filter, not PromQL)",
    "group-reloading": "a conditionThreshold on the same log-based metric (a Cloud Monitoring filter, not PromQL)",
    "pods-refused": "a conditionThreshold on a log-based metric of the StatefulSet controller's FailedCreate events (a "
    "Cloud Monitoring filter, not PromQL; tests/e2e/test_e2e_refused_pods.py matches the filter against the event the real "
    "controller records)",
    "host-maintenance": "a conditionMatchedLog on Compute Engine's system-event audit log (a Logging filter, not "
    "PromQL; tests/components/operations/maintenance/test_host_maintenance.py checks the filter)",
    "host-maintenance-unscheduled": "a conditionMatchedLog on Compute Engine's system-event audit log, UNSCHEDULED "
    "notices (a Logging filter, not PromQL; tests/components/operations/maintenance/test_host_maintenance_job.py checks the filter)",
    "maintenance-windows-close": "a conditionMatchedLog on a watching host-maintenance gate's WARNING lines in Cloud "
    "Logging (a Logging filter, not PromQL; tests/components/operations/maintenance/test_maintenance_gate.py checks which runs log WARNING, "
    "tests/components/operations/maintenance/test_host_maintenance_job.py the filter)",
    "fallback-slice": "a conditionMatchedLog on the host-maintenance gate's fallback field in Cloud Logging (a Logging "
    "filter, not PromQL; tests/e2e/test_e2e_host_maintenance.py runs the real gate and matches the plan's filter's "
    "substring in that field)",
    "maintenance-gate": "a conditionMatchedLog on the host-maintenance gate's ERROR lines in Cloud Logging (a Logging "
    "filter, not PromQL; tests/components/operations/maintenance/test_maintenance_gate.py checks which runs log ERROR)",
    "maintenance-gate-silent": "reads a log-based metric (logging_googleapis_com:user_...), which exists only in Cloud "
    "Monitoring: no local series to give it",
    "cluster-notices": "a conditionMatchedLog on GKE's cluster notifications in Cloud Logging (a Logging filter, not "
    "PromQL; tests/components/operations/alerts/test_cluster_notices.py checks the filter)",
    "gateway-errors": "reads the load balancer's request count (loadbalancing_googleapis_com:...), which exists only "
    "in Cloud Monitoring; tests/e2e/test_e2e_gateway_alerts.py runs it on promtool with load-balancer series of its own",
    "gateway-errors-unread": "reads the same load-balancer series' absence; tests/e2e/test_e2e_gateway_alerts.py runs it",
    "gateway-near-timeout": "reads the load balancer's latency distribution, which exists only in Cloud Monitoring; "
    "tests/e2e/test_e2e_gateway_alerts.py runs it on promtool with buckets of its own",
    "platform-gateway-errors": "a model stack's alert on its platform's Gateway: the gateway-errors query on the "
    "platform Gateway's load-balancer series, which exist only in Cloud Monitoring; tests/e2e/test_e2e_gateway_alerts.py "
    "runs the same builder on promtool",
    "platform-gateway-near-timeout": "a model stack's gateway-near-timeout on its platform's Gateway (Cloud "
    "Monitoring's latency distribution only); tests/e2e/test_e2e_gateway_alerts.py runs the same builder on promtool",
    "tpu-idle": "reads kubernetes_io:container_accelerator_duty_cycle, a GKE system metric that exists only in "
    "Cloud Monitoring (no upstream exporter to take its series from)",
}
"""Alert policies (the part of the resource name after ``-observability-``) no honest input is given for, and why.
The test fails when an alert without an input is not listed here, and when a listed one no longer exists."""

CHECKED_AT_LEAST: dict[str, int] = {
    "llama2-70b-disagg-v6e8x2": 10,
    "llama31-405b-v6e16": 12,
    "pathwaysjob-batch-v6e16": 2,
    "pathwaysjob-interactive-v5e16": 2,
    "saxml-175b-v5e32x2": 6,
    "vllm-llama31-405b-tpu7x16": 14,
    "vllm-llama31-405b-v6e16": 15,
    "vllm-llama33-70b-disagg-v6e8x2": 22,
    "vllm-llama33-70b-existing": 19,
    "vllm-llama33-70b-v5e16": 19,
    "vllm-llama33-70b-v6e8": 20,
}
"""Alerts checked per stack when the test came (2026-11-28), the vLLM stacks' error-rate alert, every stack's
controller alert and the vLLM and JetStream stacks' two serving-probe alerts since, then the leaders' stalled,
metrics-missing and below-minimum alerts (2026-11-29), then the serving probe's failing-in-part, missing and, behind
a Gateway, through-the-Gateway alerts, all of them and in part (2026-11-29), then Saxml's serving-probe failing,
failing-in-part and missing alerts (SRE review round 40, M5), then the leaders' capacity-reduced alert and the
production example (SRE review round 43, M1), then the autoscaler alert on the stacks with an HPA (GKE review
round 43, M2), then the slow-first-token page on the stacks whose server exports the histogram (SRE review round 44,
M3), then the capacity-wait ticket on the two stacks with a capacity fallback (issue 37, item 2); fewer fails
(an alert lost, or one no longer read)."""


# --- the pods the controllers create ------------------------------------------------------------------------------


@dataclass
class Pod:
    name: str
    namespace: str
    labels: dict[str, str]
    containers: list[str]
    completes: bool = False
    """A one-off Job's pod: Succeeded once done, never Ready again."""


@dataclass
class World:
    cluster: str
    pods: list[Pod] = field(default_factory=list)
    scrapes: list[tuple[str, Pod, int]] = field(default_factory=list)
    """(PodMonitoring name, target pod, port): the pods Managed Prometheus scrapes, ``job`` the monitoring's name."""
    deployments: list[tuple[str, str]] = field(default_factory=list)
    """(namespace, name) of the controllers' Deployments, as their upstream release manifests name them."""
    autoscalers: list[tuple[str, str]] = field(default_factory=list)
    """(namespace, name) of the plan's HorizontalPodAutoscalers."""


DS_REVISION = "5d8f3c21"
"""A DisaggregatedSet revision: the first 8 hex digits of a sha256 (lws v0.10.0 pkg/utils/disaggregatedset/utils.go
ComputeRevision, revisionLength = 8); any value of that form is one the controller may produce."""
POD_TEMPLATE_HASH = "7c9d8b6f5d"
RANDOM_SUFFIX = "x7k2p"
"""generateName's suffix: 5 characters of k8s.io/apimachinery/pkg/util/rand's alphabet ("bcdfghjklmnpqrstvwxz2456789")."""


def _containers(template: dict[str, Any]) -> list[str]:
    return [c["name"] for c in template["spec"]["containers"]]


def _labels(template: dict[str, Any]) -> dict[str, str]:
    return dict((template.get("metadata") or {}).get("labels") or {})


def _lws_pods(name: str, namespace: str, spec: dict[str, Any], extra: dict[str, str]) -> Iterator[Pod]:
    """A LeaderWorkerSet's pods (lws v0.10.0): group ``g``'s leader is pod ``<lws>-<g>`` of the leader StatefulSet
    ``<lws>``, its workers ``<lws>-<g>-<w>`` (w >= 1) of the worker StatefulSet ``<lws>-<g>``; each pod carries
    ``leaderworkerset.sigs.k8s.io/name``, ``group-index`` and ``worker-index`` (api/leaderworkerset/v1
    leaderworkerset_types.go, SetNameLabelKey, GroupIndexLabelKey, WorkerIndexLabelKey)."""
    template = spec["leaderWorkerTemplate"]
    leader = template.get("leaderTemplate") or template["workerTemplate"]
    worker = template["workerTemplate"]
    for group in range(int(spec.get("replicas") or 1)):
        for index in range(int(template.get("size") or 1)):
            tpl = leader if index == 0 else worker
            labels = {
                **_labels(tpl),
                **extra,
                "leaderworkerset.sigs.k8s.io/name": name,
                "leaderworkerset.sigs.k8s.io/group-index": str(group),
                "leaderworkerset.sigs.k8s.io/worker-index": str(index),
            }
            pod = f"{name}-{group}" if index == 0 else f"{name}-{group}-{index}"
            yield Pod(pod, namespace, labels, _containers(tpl))


def _jobset_pods(name: str, namespace: str, replicated: list[dict[str, Any]]) -> Iterator[Pod]:
    """A JobSet's pods: Job ``<jobset>-<replicatedJob>-<jobIndex>`` (jobset v0.12.0 pkg/util/placement GenJobName),
    an Indexed Job's pod ``<job>-<completionIndex>-<random>`` (kubernetes v1.34 pkg/controller/job
    indexed_job_utils.go podGenerateNameWithIndex)."""
    for rjob in replicated:
        pod_spec = rjob["template"]["spec"]
        for job in range(int(rjob.get("replicas") or 1)):
            for index in range(int(pod_spec.get("parallelism") or 1)):
                tpl = pod_spec["template"]
                pod = f"{name}-{rjob['name']}-{job}-{index}-{RANDOM_SUFFIX}"
                yield Pod(pod, namespace, _labels(tpl), _containers(tpl))


def scaled_to(plan: Plan) -> dict[tuple[str, str], int]:
    """The replicas a HorizontalPodAutoscaler holds its target at, at least (``minReplicas``, default 1), by the
    target's (kind, name): a LeaderWorkerSet whose spec leaves ``replicas`` to its HPA runs that many groups
    (https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/: the controller keeps the target's
    replicas between minReplicas and maxReplicas)."""
    out = {}
    for res in plan.resources:
        if res.type.endswith(":HorizontalPodAutoscaler"):
            spec = res.inputs.get("spec") or {}
            ref = spec.get("scaleTargetRef") or {}
            out[(ref.get("kind"), ref.get("name"))] = int(spec.get("minReplicas") or 1)
    return out


def pods(plan: Plan) -> Iterator[Pod]:
    """Every pod the plan's workloads make their controllers create."""
    held = scaled_to(plan)
    for res in plan.resources:
        kind = res.type.rsplit(":", 1)[-1]
        inputs = res.inputs
        meta = inputs.get("metadata") or {}
        name, namespace, spec = meta.get("name"), meta.get("namespace"), inputs.get("spec") or {}
        if kind == "LeaderWorkerSet":
            replicas = max(int(spec.get("replicas") or 1), held.get((kind, name), 1))
            yield from _lws_pods(name, namespace, {**spec, "replicas": replicas}, {})
        elif kind == "DisaggregatedSet":
            # each role's LeaderWorkerSet is <ds>-<slice>-<revision>-<role> (lws v0.10.0
            # pkg/utils/disaggregatedset/utils.go l.93-95 GenerateName); one slice, one group per role here
            for role in spec["roles"]:
                lws = f"{name}-0-{DS_REVISION}-{role['name']}"
                yield from _lws_pods(lws, namespace, {**role["spec"], "replicas": 1}, {})
        elif kind == "JobSet":
            yield from _jobset_pods(name, namespace, spec["replicatedJobs"])
        elif kind == "PathwaysJob":
            # the controller creates a JobSet named after the PathwaysJob with replicated Jobs "pathways-head" and
            # "worker" (pathways-job v0.1.4 internal/controller/pathwaysjob_controller.go l.65, l.249-250, l.733),
            # one worker Job per slice; container names stand in (the phase series carry none)
            slices = sum(int(w.get("numSlices") or 1) for w in spec.get("workers") or [{}])
            head = {
                "name": "pathways-head",
                "template": {"spec": {"template": {"spec": {"containers": [{"name": "pathways-rm"}]}}}},
            }
            worker = {
                "name": "worker",
                "replicas": slices,
                "template": {"spec": {"template": {"spec": {"containers": [{"name": "pathways-worker"}]}}}},
            }
            yield from _jobset_pods(name, namespace, [head, worker])
        elif kind == "Deployment" and res.type.startswith("kubernetes:apps/v1:"):
            tpl = spec["template"]
            for _ in range(int(spec.get("replicas") or 1)):
                # ReplicaSet <deployment>-<pod-template-hash>, pod <replicaset>-<random> (kubernetes
                # pkg/controller/deployment/sync.go, ReplicaSet controller's GenerateName)
                pod = f"{name}-{POD_TEMPLATE_HASH}-{RANDOM_SUFFIX}"
                yield Pod(pod, namespace, _labels(tpl), _containers(tpl))
                break
        elif kind == "Job" and res.type.startswith("kubernetes:batch/v1:"):
            tpl = spec["template"]
            yield Pod(f"{name}-{RANDOM_SUFFIX}", namespace, _labels(tpl), _containers(tpl), completes=True)


MANIFESTS = {"leaderworkerset.x-k8s.io": "lws-manifests", "jobset.x-k8s.io": "jobset-manifests"}
"""The controllers (by API group, as the plan's ``controllers`` output names them) whose release manifests the e2e
toolchain renders with kustomize from their Go modules (LWS v0.9.0, JobSet v0.12.0)."""


UNRENDERED_DEPLOYMENTS = {"custom.metrics.k8s.io": [("custom-metrics", "custom-metrics-stackdriver-adapter")]}
"""The Deployments of controllers whose release manifest the toolchain cannot render (the Go module proxy does not
serve github.com/GoogleCloudPlatform/k8s-stackdriver): as the release manifest names them (k8s-stackdriver
custom-metrics-stackdriver-adapter/deploy/production/adapter_new_resource_model.yaml, commit 0857364: namespace
``custom-metrics``, Deployment ``custom-metrics-stackdriver-adapter``). Without them the world has no series of
the adapter, and the controller alert, which fires on an absent series, would fire on the healthy input."""


def controller_deployments(plan: Plan) -> list[tuple[str, str]]:
    """The Deployments of the plan's controllers, read from their upstream release manifests (not from the code
    under test), as kube-state-metrics labels their series."""
    found = []
    # a serving stack's ``controllers`` output, or a platform stack's ``platform.controllers`` (by ``apiGroup``)
    platform = plan.outputs.get("platform") or {}
    groups = plan.outputs.get("controllers") or [c["apiGroup"] for c in platform.get("controllers") or []]
    for group in groups:
        rendered = toolchain_files().get(MANIFESTS.get(group, ""))
        if not isinstance(rendered, str):
            found += UNRENDERED_DEPLOYMENTS.get(group, [])
            continue
        for doc in yaml.safe_load_all(Path(rendered).read_text()):
            if doc and doc.get("kind") == "Deployment":
                found.append((doc["metadata"]["namespace"], doc["metadata"]["name"]))
    return found


def world(plan: Plan) -> World:
    # GMP's `cluster` label is the GKE cluster the pods run on: the stack file's cluster, or on a platform (a model
    # stack, docs/platform.md) the platform's cluster that the stack file names under `platform.cluster`
    platform = json.loads(plan.config.get("tpu-serving:platform") or "{}")
    cluster = platform.get("cluster") or json.loads(plan.config["tpu-serving:cluster"])["name"]
    found = World(cluster, list(pods(plan)), deployments=controller_deployments(plan))
    found.autoscalers = [
        (h.inputs["metadata"]["namespace"], h.inputs["metadata"]["name"])
        for h in plan.resources
        if h.type.endswith(":HorizontalPodAutoscaler")
    ]
    for res in plan.of_type("kubernetes:monitoring.googleapis.com/v1:PodMonitoring"):
        spec = res.inputs["spec"]
        wanted = spec["selector"].get("matchLabels") or {}
        namespace = res.inputs["metadata"]["namespace"]
        for pod in found.pods:
            if pod.namespace == namespace and wanted.items() <= pod.labels.items():
                found.scrapes += [(res.inputs["metadata"]["name"], pod, int(e["port"])) for e in spec["endpoints"]]
    return found


# --- the series, by upstream metric family ------------------------------------------------------------------------


def _sel(name: str, labels: dict[str, str]) -> str:
    inner = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def _values(healthy: str, outage: str | None, minutes: int) -> str:
    """``healthy`` for the whole input, or HEALTHY_MINUTES of it and then ``outage`` (promtool's expanding
    notation: ``a+bxn``, ``_`` a missing sample)."""
    if outage is None:
        return f"{healthy}x{minutes}"
    return f"{healthy}x{HEALTHY_MINUTES} {outage}x{minutes - HEALTHY_MINUTES}"


def kube_state_series(w: World, outage: bool, minutes: int) -> list[dict[str, str]]:
    """kube-state-metrics v2 ``kube_pod_status_phase`` (labels ``namespace``, ``pod``, ``uid``, ``phase``; one
    series per phase, 1 for the pod's phase and 0 for the others) and ``kube_pod_container_status_ready``
    (``namespace``, ``pod``, ``uid``, ``container``; one per container status, so none for a pod not yet
    scheduled): kubernetes/kube-state-metrics docs/metrics/workload/pod-metrics.md; ``kube_pod_status_unschedulable``
    (``namespace``, ``pod``, ``uid``; 1 while the pod's ``PodScheduled`` condition is False, no series otherwise:
    internal/store/pod.go ``createPodStatusUnschedulableFamilyGenerator``). The outage: every pod lost its node and is
    Pending again, unschedulable (its container statuses gone); the one-off Job's pods stay Succeeded."""
    out = []
    for i, pod in enumerate(w.pods):
        base = {"cluster": w.cluster, "namespace": pod.namespace, "pod": pod.name, "uid": f"uid-{i}"}
        now = "Succeeded" if pod.completes else "Running"
        after = "Succeeded" if pod.completes or not outage else "Pending"
        for phase in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
            healthy, then = str(int(phase == now)), str(int(phase == after))
            out.append(
                {
                    "series": _sel("kube_pod_status_phase", {**base, "phase": phase}),
                    "values": _values(healthy, then if outage else None, minutes),
                }
            )
        if outage and not pod.completes:
            out.append({"series": _sel("kube_pod_status_unschedulable", base), "values": _values("_", "1", minutes)})
        for container in pod.containers:
            ready = "0" if pod.completes else "1"
            out.append(
                {
                    "series": _sel("kube_pod_container_status_ready", {**base, "container": container}),
                    "values": _values(ready, "_" if outage and not pod.completes else None, minutes),
                }
            )
    return out


def deployment_series(w: World, outage: bool, minutes: int) -> list[dict[str, str]]:
    """kube-state-metrics v2 ``kube_deployment_status_replicas_available`` (labels ``namespace``, ``deployment``:
    kubernetes/kube-state-metrics docs/metrics/workload/deployment-metrics.md) of each controller's Deployment: two
    replicas available; the outage: none (its pods lost with their nodes, or crashing)."""
    return [
        {
            "series": _sel(
                "kube_deployment_status_replicas_available",
                {"cluster": w.cluster, "namespace": namespace, "deployment": name},
            ),
            "values": _values("2", "0" if outage else None, minutes),
        }
        for namespace, name in w.deployments
    ]


HPA_CONDITIONS = ("AbleToScale", "ScalingActive", "ScalingLimited")
"""The conditions the HPA controller writes (k8s.io/api v0.36.3 autoscaling/v2 types.go
HorizontalPodAutoscalerConditionType)."""


def autoscaler_series(w: World, outage: bool, minutes: int) -> list[dict[str, str]]:
    """kube-state-metrics v2 ``kube_horizontalpodautoscaler_status_condition`` (labels ``namespace``,
    ``horizontalpodautoscaler``, ``condition``, ``status``; one series per condition and status ``true``, ``false``,
    ``unknown``, 1 for the condition's status: kubernetes/kube-state-metrics internal/store/horizontalpodautoscaler.go
    ``hpaMetricFamilies``, ``addConditionMetrics``) of each HPA: every condition True, ScalingLimited False; the
    outage: ScalingActive False (FailedGetPodsMetric, the metric's way broken)."""
    out = []
    for namespace, name in w.autoscalers:
        for condition in HPA_CONDITIONS:
            healthy = "false" if condition == "ScalingLimited" else "true"
            after = "false" if condition == "ScalingActive" else healthy
            for status in ("true", "false", "unknown"):
                labels = {
                    "cluster": w.cluster,
                    "namespace": namespace,
                    "horizontalpodautoscaler": name,
                    "condition": condition,
                    "status": status,
                }
                then = str(int(status == after)) if outage else None
                out.append(
                    {
                        "series": _sel("kube_horizontalpodautoscaler_status_condition", labels),
                        "values": _values(str(int(status == healthy)), then, minutes),
                    }
                )
    return out


FIRST_TOKEN_BUCKETS = ("0.25", "0.5", "1.0", "2.5", "5.0", "10.0", "20.0", "40.0", "80.0", "+Inf")
"""Upper bounds (``le``) of a time-to-first-token histogram as prometheus_client writes them (floats, and ``+Inf``):
a few of vLLM's (vllm/v1/metrics/loggers.py, ``histogram_time_to_first_token`` buckets 0.001 s to 2560 s) and
JetStream's (jetstream/core/metrics/prometheus.py); the alert's 95th percentile needs only their order."""


def engine_series(w: World, scenario: str, minutes: int) -> list[dict[str, str]]:
    """What each scraped pod exports, by the PodMonitoring that scrapes it:

    - vLLM (vllm-tpu 0.29.0 vllm/v1/metrics/loggers.py: gauges ``vllm:num_requests_running`` and
      ``vllm:num_requests_waiting``, counter ``vllm:generation_tokens`` exposed as ``vllm:generation_tokens_total``,
      labels ``model_name`` and ``engine``);
    - JetStream (AI-Hypercomputer/JetStream jetstream/core/metrics/prometheus.py: gauge
      ``jetstream_prefill_backlog_size``, label ``id``);
    - the endpoint picker (llm-d/llm-d-router v0.10.0 pkg/epp/metrics/llm_d_router_metrics.go: counters
      ``llm_d_epp_request_total`` and ``llm_d_epp_request_error_total``, the latter with ``error_code``; a CounterVec
      has no series before its first error);
    - vLLM's HTTP responses (prometheus-fastapi-instrumentator v8.0.0, as vllm-tpu 0.29.0 instruments its server:
      counter ``http_requests_total``, labels ``method``, ``status`` grouped by class, ``2xx`` or ``5xx``, and
      ``handler``; a status class has no series before its first response).

    - the serving probe's blackbox exporter (prometheus/blackbox_exporter v0.28.0 prober/handler.go l.78-85: gauges
      ``probe_success``, 1 or 0, and ``probe_duration_seconds``, answered on ``/probe`` with no label of their own;
      Managed Prometheus adds the target labels), a healthy 1-token completion in 0.3 s.

    ``overload``: 50 requests waiting per engine; ``stall``: requests running, no token generated; ``scrape-lost``:
    no series of any engine ingested any more (the pods stay Ready); ``errors``: half
    the picker's requests fail; ``server-errors``: 10 requests a second answered, and 2 more a second answered 5xx
    (a sixth of the responses); ``idle``: no request at all; ``trickle``: one request every ten minutes per server,
    each a 5xx (all errors, below the error-rate alert's traffic guard); ``probe-fails``: every probe fails at the
    module's 50 s timeout (a hung engine); ``probe-slow``: every probe succeeds in 20 s; ``first-token-slow``: every
    request waits 30 s for its first token."""
    out: list[dict[str, str]] = []

    def add(name: str, labels: dict[str, str], healthy: str, outage: str | None) -> None:
        if scenario == "scrape-lost":  # the scrape stops: no sample of any series after the healthy quarter
            outage = "_"
        out.append({"series": _sel(name, labels), "values": _values(healthy, outage, minutes)})

    def first_token(name: str, labels: dict[str, str]) -> None:
        """A time-to-first-token histogram (seconds): 10 requests a minute under 0.25 s; from the outage on, in
        ``first-token-slow``, every request waits 30 s (only the buckets from 40 s on still grow)."""
        for le in FIRST_TOKEN_BUCKETS:
            stuck = scenario == "first-token-slow" and le != "+Inf" and float(le) < 30
            values = f"0+10x{HEALTHY_MINUTES} {10 * HEALTHY_MINUTES}+0x{minutes - HEALTHY_MINUTES}" if stuck else None
            if scenario == "scrape-lost":
                values = f"0+10x{HEALTHY_MINUTES} _x{minutes - HEALTHY_MINUTES}"
            out.append({"series": _sel(f"{name}_bucket", {**labels, "le": le}), "values": values or f"0+10x{minutes}"})

    for job, pod, port in w.scrapes:
        base = {
            "cluster": w.cluster,
            "namespace": pod.namespace,
            "job": job,
            "pod": pod.name,
            "instance": f"{pod.name}:{port}",
        }
        if "vllm-leader" in pod.containers or any(c.startswith("vllm") for c in pod.containers):
            labels = {**base, "model_name": "meta-llama/Llama-3.3-70B-Instruct", "engine": "0"}
            add("vllm:num_requests_waiting", labels, "2", "50" if scenario == "overload" else None)
            first_token("vllm:time_to_first_token_seconds", labels)
            out += _http_responses(base, scenario, minutes)
            add("vllm:num_requests_running", labels, "4", "4" if scenario == "stall" else None)
            if scenario == "stall":
                out.append(
                    {
                        "series": _sel("vllm:generation_tokens_total", labels),
                        "values": f"0+100x{HEALTHY_MINUTES} {100 * HEALTHY_MINUTES}+0x{minutes - HEALTHY_MINUTES}",
                    }
                )
            else:
                add("vllm:generation_tokens_total", labels, "0+100", None)
        elif "jetstream-http" in pod.containers or "jax-tpu" in pod.containers:
            add("jetstream_prefill_backlog_size", {**base, "id": "0"}, "2", "50" if scenario == "overload" else None)
            first_token("jetstream_time_to_first_token", {**base, "id": "0"})
        elif "blackbox-exporter" in pod.containers:
            success, duration = {"probe-fails": ("0", "49.5"), "probe-slow": ("1", "20")}.get(scenario, (None, None))
            add("probe_success", base, "1", success)
            add("probe_duration_seconds", base, "0.3", duration)
        elif job.endswith("-epp"):
            labels = {
                **base,
                "model_name": "llama",
                "target_model_name": "llama",
                "fairness_id": "default",
                "priority": "0",
            }
            add("llm_d_epp_request_total", labels, "0+600", None)
            if scenario == "errors":
                out.append(
                    {
                        "series": _sel("llm_d_epp_request_error_total", {**labels, "error_code": "ServiceUnavailable"}),
                        "values": f"_x{HEALTHY_MINUTES} 0+300x{minutes - HEALTHY_MINUTES}",
                    }
                )
    return out


def _http_responses(base: dict[str, str], scenario: str, minutes: int) -> list[dict[str, str]]:
    """vLLM's ``http_requests_total`` of one server: its completions answered ``2xx`` (600 a minute; none when
    ``idle`` or ``trickle``), and from the outage on, in ``server-errors`` or ``trickle``, answered ``5xx``."""
    labels = {**base, "method": "POST", "handler": "/v1/completions"}
    quiet = scenario in ("idle", "trickle")
    ok = {"series": _sel("http_requests_total", {**labels, "status": "2xx"}), "values": _values("0+600", None, minutes)}
    if quiet:
        ok["values"] = f"0+0x{minutes}"
    errors = {"server-errors": "0+120", "trickle": "0+0.1"}.get(scenario)
    if errors is None:
        return [ok]
    failed = f"_x{HEALTHY_MINUTES} {errors}x{minutes - HEALTHY_MINUTES}"
    return [ok, {"series": _sel("http_requests_total", {**labels, "status": "5xx"}), "values": failed}]


FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("controller-down", ("kube_deployment_status_replicas_available",)),
    ("autoscaler-blind", ("kube_horizontalpodautoscaler_status_condition",)),
    ("server-errors", ("http_requests_total",)),
    ("first-token-slow", ("vllm:time_to_first_token_seconds_bucket", "jetstream_time_to_first_token_bucket")),
    ("stall", ("vllm:generation_tokens_total",)),
    ("probe-slow", ("probe_duration_seconds",)),
    ("probe-fails", ("probe_success",)),
    ("errors", ("llm_d_epp_request_error_total",)),
    ("overload", ("vllm:num_requests_waiting", "jetstream_prefill_backlog_size")),
    ("pods-lost", ("kube_pod_status_phase", "kube_pod_container_status_ready", "kube_pod_status_unschedulable")),
)
"""The outage each family of upstream metrics stands for, first match wins (a stall alert also reads the queue)."""
QUIET: dict[str, tuple[str, ...]] = {
    "server-errors": ("idle", "trickle"),
    "probe-slow": ("probe-fails",),
    "first-token-slow": ("overload",),
}
"""More inputs an alert of the scenario must stay quiet on: the error rate with no traffic (0/0) and with a few
requests, all failed, below its guard; the slow probe with every probe failed (slow at its timeout: the failing
alert's, not this one's)."""
ENGINE_GAUGES = ("vllm:num_requests_running", "vllm:num_requests_waiting", "jetstream_prefill_backlog_size")
"""An alert that reads the pods' readiness together with an engine's gauge watches the scrape of Ready pods: its
outage is ``scrape-lost``."""
KNOWN_METRICS = {m for _, metrics in FAMILIES for m in metrics} | {
    "vllm:num_requests_running",
    "llm_d_epp_request_total",
}
METRIC = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{|\[)")


# --- the alerts of a plan -----------------------------------------------------------------------------------------


@dataclass
class Alert:
    name: str
    query: str
    duration: int
    interval: int


def _seconds(value: str | None) -> int:
    return int(str(value or "0s").rstrip("s"))


def alerts(plan: Plan) -> tuple[list[Alert], dict[str, str]]:
    """The plan's PromQL conditions, and each other condition's policy with why it is not run here."""
    found: list[Alert] = []
    other: dict[str, str] = {}
    for res in plan.of_type(ALERT_POLICY):
        for i, condition in enumerate(res.inputs.get("conditions") or []):
            promql = condition.get("conditionPrometheusQueryLanguage")
            name = res.name if i == 0 else f"{res.name}-{i}"
            if promql is None:
                other[res.name] = f"{sorted(condition)}"
                continue
            found.append(
                Alert(
                    name,
                    promql["query"],
                    _seconds(promql.get("duration")),
                    _seconds(promql.get("evaluationInterval")) or 60,
                )
            )
    return found, other


def short(name: str) -> str:
    """An alert policy's key: its name after its component's (a serving stack's ``-observability-``, a platform
    stack's ``-alerts-``)."""
    return re.split(r"-(?:observability|alerts)-", name, maxsplit=1)[-1]


def scenario_of(alert: Alert) -> str | None:
    read = set(METRIC.findall(alert.query))
    if not read <= KNOWN_METRICS:
        return None
    if "kube_pod_container_status_ready" in read and read & set(ENGINE_GAUGES):
        return "scrape-lost"
    if "absent_over_time(" in alert.query:  # fires on series that stop: the scrape's loss, not their values
        return "scrape-lost"
    return next((s for s, metrics in FAMILIES if read & set(metrics)), None)


# --- promtool -----------------------------------------------------------------------------------------------------


def promtool() -> Path:
    if not toolchain_file().is_file() or "promtool" not in load_toolchain():
        pytest.skip("the e2e toolchain has no promtool (make e2e-tools)")
    return load_toolchain()["promtool"]


def _firing(alert: Alert, minute: int, expect: int) -> dict[str, Any]:
    expr = f'clamp_max(count(ALERTS{{alertname="{alert.name}", alertstate="firing"}}), 1) or vector(0)'
    return {"expr": expr, "eval_time": f"{minute}m", "exp_samples": [{"labels": "{}", "value": expect}]}


def rule_tests(checked: list[tuple[Alert, str]], w: World) -> list[dict[str, Any]]:
    tests = []
    for alert, scenario in checked:
        minutes = HEALTHY_MINUTES + alert.duration // 60 + SLACK_MINUTES + 5
        fire_at = HEALTHY_MINUTES + alert.duration // 60 + SLACK_MINUTES
        early = HEALTHY_MINUTES + alert.duration // 60 - 2
        for outage, name in [(False, "healthy"), (True, scenario), *((False, q) for q in QUIET.get(scenario, ()))]:
            series = kube_state_series(w, outage and scenario == "pods-lost", minutes)
            series += deployment_series(w, outage and scenario == "controller-down", minutes)
            series += autoscaler_series(w, outage and scenario == "autoscaler-blind", minutes)
            series += engine_series(w, scenario if outage else name, minutes)
            checks = [_firing(alert, fire_at, int(outage)), _firing(alert, HEALTHY_MINUTES - 1, 0)]
            if early > HEALTHY_MINUTES - 1:
                checks.append(_firing(alert, early, 0))
            tests.append(
                {
                    "name": f"{alert.name} {'outage ' + scenario if outage else name}",
                    "interval": "1m",
                    "input_series": series,
                    "promql_expr_test": checks,
                }
            )
    return tests


def run_promtool(binary: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def run_rules(
    binary: Path, stack: str, checked: list[tuple[Alert, str]], w: World, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    """``promtool check rules`` on the alerts (it must pass), then ``promtool test rules``: its result."""
    groups: dict[int, list[dict[str, str]]] = {}
    for alert, _ in checked:
        groups.setdefault(alert.interval, []).append(
            {"alert": alert.name, "expr": alert.query, "for": f"{alert.duration}s"}
        )
    rules = {"groups": [{"name": f"{stack}-{i}s", "interval": f"{i}s", "rules": r} for i, r in groups.items()]}
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules, sort_keys=False))
    check = run_promtool(binary, ["check", "rules", "rules.yaml"], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": rule_tests(checked, w)}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    return run_promtool(binary, ["test", "rules", "tests.yaml"], tmp_path)


@pytest.mark.parametrize("stack", [*STACKS, *PLATFORM_STACKS])
def test_alert_policies_fire_on_an_outage_and_not_when_healthy(stack: str, tmp_path: Path) -> None:
    binary = promtool()
    started = time.monotonic()
    plan = plan_of(stack)
    found, other = alerts(plan)
    assert found or other, f"{stack}: no alert policy in the plan"
    w = world(plan)
    checked, missing = [], {}
    for alert in found:
        scenario = scenario_of(alert)
        if scenario is None:
            missing[short(alert.name)] = alert.query
        else:
            checked.append((alert, scenario))
    missing |= {short(n): why for n, why in other.items()}
    unexplained = {n: q for n, q in missing.items() if n not in NOT_COVERED}
    assert not unexplained, f"{stack}: alerts with no upstream input (add one, or list in NOT_COVERED): {unexplained}"
    assert len(checked) >= CHECKED_AT_LEAST.get(stack, 1), (stack, [a.name for a, _ in checked])

    result = run_rules(binary, stack, checked, w, tmp_path)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-6000:]
    print(f"{stack}: {len(checked)} alerts checked, {len(missing)} not covered, {time.monotonic() - started:.1f} s")


def test_not_covered_lists_only_alerts_that_exist() -> None:
    names = {short(n) for stack in STACKS for n in _all_policy_names(plan_of(stack))}
    assert set(NOT_COVERED) <= names, set(NOT_COVERED) - names


def _all_policy_names(plan: Plan) -> set[str]:
    return {r.name for r in plan.of_type(ALERT_POLICY)}


PLANTED = (
    ("cluster_name=", "no-ready-leader", 'cluster="', 'cluster_name="', (0, 1)),
    ("leader name", "no-ready-leader", 'pod=~"vllm-[0-9]+"', 'pod=~"vllm-leader-[0-9]+"', (0, 1)),
    ("threshold", "backlog", "> 20", "> 2000", (1, 0)),
    ("status code", "error-rate", 'status=~"5xx"', 'status=~"500"', (1, 0)),
    ("no traffic guard", "error-rate", " * 60) >= 1)", " * 60) >= 0)", (0, 1)),
    ("controller namespace", "controller-unavailable", 'namespace="lws-system"', 'namespace="lws"', (0, 1)),
    ("probe job", "probe-failing", 'job="vllm-api-prober"', 'job="vllm-api-probe"', (1, 0)),
    ("failed probes as slow", "probe-slow", "== 1))", ">= 0))", (0, 1)),
)
"""Breaks planted in ``vllm-llama33-70b-v5e16``'s alerts, each one the engine must catch: a label its series do not
carry (the healthy input fires: no leader seems Ready), a leader pattern no LWS pod matches (the same), a threshold
no outage reaches (the outage does not fire), a status code where vLLM's series carry the class (``500`` for ``5xx``:
the outage does not fire), a traffic guard that admits any traffic (a trickle of failed requests fires), a controller
namespace the release does not use (its series is absent, so the healthy input fires: noisy, no longer silent), a probe job no PodMonitoring names (the outage does
not fire), a slow-probe guard that no longer excludes failed probes (``probe_success >= 0`` holds when it is 0: failed probes,
slow at their timeout, fire the slow alert). Each with
the (expected, got) of every check that fails: fires
while it must not, or stays quiet when it must fire."""


@pytest.mark.parametrize(("what", "key", "old", "new", "fails"), PLANTED, ids=[p[0] for p in PLANTED])
def test_alert_policies_a_planted_break_fails(
    what: str, key: str, old: str, new: str, fails: tuple[int, int], tmp_path: Path
) -> None:
    binary = promtool()
    plan = plan_of("vllm-llama33-70b-v5e16")
    (alert,) = [a for a in alerts(plan)[0] if short(a.name) == key]
    assert old in alert.query, alert.query
    broken = Alert(alert.name, alert.query.replace(old, new), alert.duration, alert.interval)
    scenario = scenario_of(broken)
    assert scenario is not None
    result = run_rules(binary, "planted", [(broken, scenario)], world(plan), tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    failed = set(re.findall(r"exp: \{\} (\d)E\+00\s+got: \{\} (\d)E\+00", result.stderr))
    assert failed == {(str(fails[0]), str(fails[1]))}, result.stderr
