"""Dashboard panels and alerts per serving role (the disaggregated vLLM mode's prefill and decode), for
:mod:`tpu_serving.operations.observability`.

A role's series are those its own PodMonitoring scraped: Managed Service for Prometheus sets the ``job`` target label
to the PodMonitoring's name (https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed, "the job
label ... the name of the PodMonitoring"). A role's pods are found in kube-state-metrics by name: its controller
names them ``<ds>-<slice>-<rev8>-<role>-<group>[-<worker>]`` (kubernetes-sigs/lws@v0.10.0 lws_manager.go l.59-99 for
the LeaderWorkerSet, the LWS pod names after it).

Plain data in, plain data out: this module imports nothing of the library, so :mod:`~tpu_serving.operations.observability`
wraps its results in its own ``Chart`` and ``Alert``.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


class Thresholds(Protocol):
    """The alert settings the role alerts read (``ObservabilitySettings`` is one)."""

    @property
    def not_ready_minutes(self) -> int: ...
    @property
    def no_ready_leader_minutes(self) -> int: ...
    @property
    def idle_duty_cycle_percent(self) -> float: ...
    @property
    def backlog_threshold(self) -> float: ...
    @property
    def backlog_minutes(self) -> int: ...
    @property
    def stalled_minutes(self) -> int: ...
    @property
    def scrape_interval_seconds(self) -> int: ...


SERVED_WINDOW_SECONDS = 180
"""How far back a leader's engine gauge must have been ingested for the leader to count as serving (at least two
scrape intervals: :func:`served_window`)."""


def served_window(settings: Thresholds) -> int:
    """Seconds of :data:`SERVED_WINDOW_SECONDS`, or two scrape intervals when those are longer."""
    return max(SERVED_WINDOW_SECONDS, 2 * settings.scrape_interval_seconds)


def ingested(ready: str, gauge: str, scraped: str, window: int) -> str:
    """The pods of ``ready`` (by namespace and pod) whose ``gauge`` under the matchers ``scraped`` was ingested within
    ``window`` seconds: a VM that goes silent keeps its pod's containers ready in kube-state-metrics, while its engine
    series stop (:func:`tpu_serving.operations.alerts.serving_alerts.serving_leaders` cites it)."""
    return f"({ready} and on(pod) max by (pod) (present_over_time({gauge}{scraped}[{window}s])))"


@dataclass(frozen=True)
class RoleSignals:
    """One serving role's series: which PodMonitoring scraped them, its pods' names, and its signals."""

    role: str
    """The role's name (``prefill``, ``decode``)."""
    job: str
    """Name of the role's PodMonitoring (the ``job`` label of its series)."""
    pod_pattern: str
    """RE2 pattern of its pods' names (for kube-state-metrics' series)."""
    leader_pattern: str | None = None
    """RE2 pattern of its leader pods' names, the pods that take its requests (None: no alert on none Ready)."""
    requests_waiting: str | None = None
    """Gauge of its queue."""
    requests_running: str | None = None
    """Gauge of its requests being processed."""
    time_to_first_token: str | None = None
    """Histogram (base name) of its time to the first token, in seconds."""
    transfer_time: str | None = None
    """Histogram (base name) of its KV transfers, in milliseconds (None: the role records none)."""
    generation_tokens: str | None = None
    """Counter (its samples' name, ``..._total``) of the tokens its engine generated."""


def _matchers(labels: Mapping[str, str]) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def scraped(cluster: str, namespace: str, role: RoleSignals) -> str:
    """Matchers of the role's scraped series."""
    return _matchers({"cluster": cluster, "namespace": namespace, "job": role.job})


def charts(cluster: str, namespace: str, role: RoleSignals) -> list[tuple[str, list[str], str]]:
    """``(title, PromQL queries, y label)`` of the role's panels: its queue, its time to first token (on decode it
    includes the KV pull), its KV transfer time where it records one."""
    where = scraped(cluster, namespace, role)
    out = []
    queue = [f"sum({m}{where})" for m in (role.requests_running, role.requests_waiting) if m]
    if queue:
        out.append((f"{role.role}: requests running and waiting", queue, "requests"))
    for metric, title, unit in (
        (role.time_to_first_token, "time to first token", "seconds"),
        (role.transfer_time, "KV transfer time", "milliseconds"),
    ):
        if metric:
            out.append(
                (
                    f"{role.role}: {title} (p50, p99)",
                    [f"histogram_quantile({q:g}, sum by (le) (rate({metric}_bucket{where}[5m])))" for q in (0.5, 0.99)],
                    unit,
                )
            )
    return out


def backlog_query(cluster: str, namespace: str, role: RoleSignals, threshold: float) -> str | None:
    """The role's queue above ``threshold`` (None: it exports no queue)."""
    if not role.requests_waiting:
        return None
    return f"sum({role.requests_waiting}{scraped(cluster, namespace, role)}) > {threshold:g}"


STALLED_HOLD_MINUTES = 1
"""Minutes the stalled-engine condition must hold (each evaluation in it sees requests in flight): a pod whose first
request arrives after an idle window generates its first token within it, so it clears before it fires."""


def stalled_query(cluster: str, namespace: str, role: RoleSignals, minutes: int) -> str | None:
    """Leader pods of the role with requests running or waiting now and no token generated in the last ``minutes``:
    a wedged engine that still answers ``/health`` (None: the role exports no queue or no token counter). By pod
    (Managed Service for Prometheus sets the ``pod`` target label by default: PodMonitoring v0.17.2
    ``targetLabels.metadata`` defaults to container, pod, top_level_controller_name and _type); a pod whose counter
    has no sample counts as generating nothing."""
    if not (role.requests_running and role.requests_waiting and role.generation_tokens):
        return None
    where = scraped(cluster, namespace, role)
    return stalled_pods(where, (role.requests_running, role.requests_waiting), role.generation_tokens, minutes)


def stalled_pods(where: str, in_flight: Sequence[str], generation_tokens: str, minutes: int) -> str:
    """PromQL of the pods (label ``pod``) of the scraped series under the matchers ``where`` whose gauges
    ``in_flight`` (requests running, waiting) sum above zero while their counter ``generation_tokens`` did not grow
    in the last ``minutes``."""
    busy = " + ".join(f"sum by (pod) ({m}{where})" for m in in_flight)
    generated = f"sum by (pod) (increase({generation_tokens}{where}[{minutes}m]))"
    return f"(({busy}) > 0) unless on(pod) ({generated} > 0)"


def not_ready_query(cluster: str, namespace: str, role: RoleSignals, ready: str, phase: str, phases: str) -> str:
    """The role's pods Pending or Running and not Ready, including those with no Ready condition yet (never
    scheduled) (``ready`` and ``phase`` are kube-state-metrics' series, ``phases`` the phases that should be
    ready)."""
    where = f'cluster="{cluster}", namespace="{namespace}", pod=~"{role.pod_pattern}"'
    return f'sum(({phase}{{{where}, phase=~"{phases}"}} == 1) unless on(namespace, pod) {ready_pods(ready, where)}) > 0'


def ready_pods(ready: str, where: str) -> str:
    """PromQL of the pods (by namespace and pod) whose every container passes its readiness check, from
    kube-state-metrics' per-container readiness ``ready`` (1 ready, 0 not) under the label matchers ``where``: a pod
    is Ready when all its containers are (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/
    #pod-conditions). A pod with no container status yet (never scheduled) has no series."""
    return f"(min by (namespace, pod) ({ready}{{{where}}}) == 1)"


def alerts(
    cluster: str, namespace: str, role: RoleSignals, settings: Thresholds, kube: tuple[str, str, str]
) -> list[tuple[str, str, str, int, str, str]]:
    """``(key, title, PromQL, minutes, runbook, severity)`` of the role's not-ready (WARNING), no-ready-leader
    (CRITICAL), backlog (WARNING) and stalled-engine (ERROR) alerts: a role
    that cannot start, keep up or generate is named (``kube``: kube-state-metrics' not-ready and phase series, the phases that should be ready).
    Like every alert of the stack, they are defined before their metrics exist (``disable_metric_validation``)."""
    r = role.role
    out = [
        (
            f"not-ready-{r}",
            f"{r} pods not ready",
            not_ready_query(cluster, namespace, role, *kube),
            settings.not_ready_minutes,
            f"A {r} pod has not been ready for {settings.not_ready_minutes} minutes: find it (`kubectl -n {namespace} "
            f"get pods -l disaggregatedset.x-k8s.io/role={r}`), read its events and logs; a pending group waits for a "
            "whole slice of its role.",
            "WARNING",
        )
    ]
    if role.leader_pattern is not None:
        minutes = settings.no_ready_leader_minutes
        query = no_ready_leader_query(cluster, namespace, role.leader_pattern, kube[0])
        gauge = role.requests_running or role.requests_waiting
        if gauge is not None:  # SRE review 30, m6: a role's only leader on a VM gone silent stays ready in kube state
            where = f'cluster="{cluster}", namespace="{namespace}", pod=~"{role.leader_pattern}"'
            serving = ingested(
                ready_pods(kube[0], where), gauge, scraped(cluster, namespace, role), served_window(settings)
            )
            query = f"(count({serving}) or vector(0)) < 1"
        out.append(
            (
                f"no-ready-leader-{r}",
                f"No {r} leader ready",
                query,
                minutes,
                f"No {r} leader of namespace {namespace} has been Ready (and, where the role exports its queue, "
                f"scraped: a VM gone silent leaves its pod ready) for {minutes} minutes: every request that "
                f"needs {r} fails. It also fires while the first groups load after a deploy. Look at the role's pods "
                f"(`kubectl -n {namespace} get pods -l disaggregatedset.x-k8s.io/role={r}`), their events and logs.",
                "CRITICAL",
            )
        )
    backlog = backlog_query(cluster, namespace, role, settings.backlog_threshold)
    if backlog is not None:
        out.append(
            (
                f"backlog-{r}",
                f"{r} queue backlog high",
                backlog,
                settings.backlog_minutes,
                f"More than {settings.backlog_threshold:g} requests have waited on {r} for {settings.backlog_minutes} "
                f"minutes: the {r} groups are saturated; add {r} slices (or let its autoscaling reach them) or shed load.",
                "WARNING",
            )
        )
    stalled = stalled_query(cluster, namespace, role, settings.stalled_minutes)
    if stalled is not None:
        out.append(
            (
                f"stalled-{r}",
                f"{r} engine stalled",
                stalled,
                STALLED_HOLD_MINUTES,
                f"A {r} leader has had requests in flight for {settings.stalled_minutes} minutes without generating a "
                "token: its engine is wedged (a failed KV pull, a hung Ray worker) while its /health still answers. Its "
                "liveness probe (serving.probes.stallSeconds) restarts it once the stall outlasts its window and "
                f"failure threshold; sooner: read the pod's logs (`kubectl -n {namespace} logs <pod> -c vllm-leader`; "
                "the KV connector logs 'failed to pull'), then recreate its group: delete the leader pod.",
                "ERROR",
            )
        )
    return out


def no_ready_leader_query(cluster: str, namespace: str, leaders: str, ready: str) -> str:
    """No pod matching ``leaders`` (RE2, the pods that take requests) is Ready, including when none exists (``or
    vector(0)``: a JobSet that failed for good has no pods, hence no series); ``ready`` is kube-state-metrics'
    readiness series."""
    where = f'cluster="{cluster}", namespace="{namespace}", pod=~"{leaders}"'
    return f"(count({ready_pods(ready, where)}) or vector(0)) < 1"


def leader_pods(serves: bool, pattern: str | None, leader_worker_sets: Sequence[str]) -> str | None:
    """RE2 pattern of the pods that take requests: the backend's own ``pattern``, or the leaders of its
    LeaderWorkerSets (a leader pod is ``<lws>-<group>``, a worker ``<lws>-<group>-<worker>``:
    kubernetes-sigs/lws@v0.10.0 pkg/controllers/leaderworkerset_controller.go l.524 reads the leader StatefulSet by
    the LeaderWorkerSet's name, pod_controller.go l.438 names each worker StatefulSet after its leader pod); None:
    it serves no requests, or declares neither."""
    if not serves:
        return None
    if pattern is not None:
        return pattern
    if not leader_worker_sets:
        return None
    names = "|".join(name_literal(n) for n in leader_worker_sets)
    return f"({names})-[0-9]+" if len(leader_worker_sets) > 1 else f"{names}-[0-9]+"


def name_literal(name: str) -> str:
    """A Kubernetes object name as a literal inside a double-quoted PromQL string holding an RE2 pattern. A name holds
    lowercase letters, digits, ``-`` and ``.``; only ``.`` means something to RE2, and its backslash must be doubled
    in the PromQL string, which takes no other escape (prometheus/prometheus promql/parser/lex.go ``lexEscape``,
    l.797-820 at d15adb9: ``\\-`` is an "unknown escape sequence", so ``re.escape``'s ``jetstream\\-pathways`` made
    the query unparsable)."""
    return name.replace(".", "\\\\.")


def idle_query(
    duty_cycle: str, waiting: str, leaders: str | None, settings: Thresholds, roles: Sequence[RoleSignals] = ()
) -> str:
    """PromQL of the groups whose TPUs ran under ``settings.idle_duty_cycle_percent`` of the time while their own leader has requests waiting:
    one hung group among busy ones fires, which an average over the namespace hid. ``duty_cycle`` is GKE's per-container
    TPU duty cycle (label ``pod_name``), ``waiting`` the leaders' scraped queue (label ``pod``: a PodMonitoring's default
    target labels, GoogleCloudPlatform/prometheus-engine v0.17.2 PodMonitoring CRD ``targetLabels.metadata``, default
    ``[container, pod, top_level_controller_name, top_level_controller_type]``); ``leaders`` is the RE2 pattern of
    the leader pods, a worker's name being its leader's and ``-<worker index>`` (:func:`leader_pods`); None (no leader
    pods known): the roles' leaders, or else the namespace's average duty cycle while anything waits."""
    percent = settings.idle_duty_cycle_percent
    patterns = [r.leader_pattern for r in roles if r.leader_pattern is not None]
    leaders = leaders if leaders is not None or not patterns else "|".join(patterns)
    if leaders is None:
        return f"(avg({duty_cycle}) < {percent:g}) and on() (sum({waiting}) > 0)"
    group = '"group", "$1"'
    tpus = f'avg by (group) (label_replace({duty_cycle}, {group}, "pod_name", "({leaders})(-[0-9]+)?"))'
    queue = f'sum by (group) (label_replace({waiting}, {group}, "pod", "({leaders})"))'
    return f"({tpus} < {percent:g}) and on(group) ({queue} > 0)"


def namespace_not_ready_query(cluster: str, namespace: str, kube: tuple[str, str, str]) -> str:
    """Pods of the namespace Pending or Running (not finished Job pods) and not Ready, or never scheduled; ``kube``:
    the readiness and phase series and the phases that should become ready (:mod:`tpu_serving.operations.observability`)."""
    ready_metric, phase, phases = kube
    where = {"cluster": cluster, "namespace": namespace}
    ready = ready_pods(ready_metric, _matchers(where)[1:-1])
    live = phase + _matchers(where)[:-1] + f', phase=~"{phases}"}}'
    return f"sum(({live} == 1) unless on(namespace, pod) {ready}) > 0"


def no_ready_leader_alert(
    cluster: str, namespace: str, leaders: str, minutes: int, ready: str
) -> tuple[str, str, str, int, str, str]:
    """``(key, title, PromQL, minutes, runbook, severity)`` of the alert on no pod that takes requests Ready: the
    fast page for an outage (CRITICAL), which the not-ready alert (held past the startup window) is not."""
    return (
        "no-ready-leader",
        "No serving pod ready",
        no_ready_leader_query(cluster, namespace, leaders, ready),
        minutes,
        f"No pod of namespace {namespace} that takes requests has been Ready for {minutes} minutes: the stack serves "
        "nothing. It also fires while the first groups load after a deploy, and during a rollout that replaces every "
        f"group at once. Look at the pods (`kubectl -n {namespace} get pods`), their events and the controller's status "
        "(the JobSet's or LeaderWorkerSet's conditions).",
        "CRITICAL",
    )


ROUTER_ERROR_RATIO = 0.05
"""Share of the endpoint picker's requests that may fail, over five minutes, before its error alert fires."""


def router_pods(epp: str) -> str:
    """RE2 pattern of the endpoint picker Deployment ``epp``'s pods: ``<deployment>-<pod-template-hash>-<suffix>``
    (its ReplicaSet is "[DEPLOYMENT-NAME]-[HASH]", kubernetes.io/docs/concepts/workloads/controllers/deployment,
    "Creating a Deployment"; the ReplicaSet names its pods ``<replicaset>-<random suffix>``). ``epp`` is a DNS-1035
    label (the Service's name and ``-gateway-epp``): letters, digits and ``-``, none special in RE2, so it goes
    unescaped (a backslash would be an invalid escape in a PromQL string)."""
    return f"{epp}-[a-z0-9]+-[a-z0-9]+"


def router_alerts(
    cluster: str, namespace: str, epp: str | None, minutes: int, ready: str, fails_closed: bool = False
) -> list[tuple[str, str, str, int, str, str]]:
    """``(key, title, PromQL, minutes, runbook, severity)`` of the alerts on the endpoint picker ``epp`` (none
    without one): no replica Ready (CRITICAL when ``fails_closed``: the pool then refuses every request; ERROR for a
    FailOpen pool, whose requests still reach the leaders, unpicked: SRE review round 41, m4) (kube-state-metrics' ``ready`` series; the probes ask the picker's ``liveness`` or
    ``inference-extension`` gRPC service, so a replica is Ready while it serves), and its own error ratio. The error
    series are llm-d/llm-d-router@v0.10.0's ``llm_d_epp_request_error_total`` over ``llm_d_epp_request_total``
    (pkg/epp/metrics/llm_d_router_metrics.go l.28 subsystem ``llm_d_epp``, l.40-56), scraped by the picker's
    PodMonitoring (``job`` = its name, the Deployment's)."""
    if epp is None:
        return []
    where = f'{{cluster="{cluster}", namespace="{namespace}", job="{epp}"}}'
    errors = f"sum(rate(llm_d_epp_request_error_total{where}[5m]))"
    total = f"sum(rate(llm_d_epp_request_total{where}[5m]))"
    return [
        (
            "router-not-ready",
            "No endpoint picker ready",
            no_ready_leader_query(cluster, namespace, router_pods(epp), ready),
            minutes,
            f"No replica of the endpoint picker {epp} in namespace {namespace} has been Ready for {minutes} minutes: "
            "a FailClose pool refuses every request, a FailOpen one routes without picking. Look at its pods (`kubectl "
            f"-n {namespace} get pods -l app={epp}`), their events and logs, and the CPU pool's nodes.",
            "CRITICAL" if fails_closed else "ERROR",
        ),
        (
            "router-errors",
            "Endpoint picker errors high",
            f"({errors} / {total}) > {ROUTER_ERROR_RATIO:g}",
            5,
            f"More than {ROUTER_ERROR_RATIO:.0%} of the requests the endpoint picker {epp} handled failed over five "
            "minutes (by error_code on the dashboard's series llm_d_epp_request_error_total): read its logs "
            f"(`kubectl -n {namespace} logs -l app={epp}`) and the serving pods' readiness.",
            "ERROR",
        ),
    ]
