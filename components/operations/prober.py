"""The serving probe: a black-box request through the serving path every minute, and the alerts on its failures.

Pods can be Ready while the engine behind them is hung: vLLM's ``/health`` answers 200 while its EngineCore busy loop
is frozen (vllm-project/vllm PR #36451, issue #39863), a hung request never completes, so no response counter counts
it (:mod:`tpu_serving.operations.alerts.error_rate`), and a picker may keep preferring the hung server (SRE review B2, M7). A real
request is the one signal that sees that. The Prometheus blackbox exporter (github.com/prometheus/blackbox_exporter,
:data:`PROBER_IMAGE`) runs as a Deployment in the serving namespace, its module in a ConfigMap, and Managed Service for
Prometheus scrapes its ``/probe`` every minute (the stack's PodMonitoring, with the ``module`` and ``target``
parameters): each scrape sends one 1-token completion of the served model and records ``probe_success`` and
``probe_duration_seconds``, which :func:`probe_alerts` alert on.

The first target is the in-cluster Service in front of the engine (:class:`ProbeTarget`). Behind a Gateway, the
exporter sends the same request a second time through the Gateway's address (:func:`tpu_serving.operations.serving_metrics.through_gateway`), the clients'
path: the load balancer, the endpoint picker and the engine. The stack reserves that address, so it is known before
GKE programs the Gateway (:func:`tpu_serving.traffic.gateway.gateway`). The Service probe sees a hung or failing engine;
the Gateway probe sees, besides, a load balancer or endpoint picker that answers 502, 503 or 504, such as a
fail-closed pool whose picker holds no lease (SRE review round 39, B2; docs/operate.md, "Serving probe").

Plain data in, plain data out, like :mod:`tpu_serving.operations.alerts.error_rate`, but for :func:`create`, which applies the
builders' objects.
"""

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
import yaml

from ..catalog.versions import PINS
from ..common.naming import SERVING_PRIORITY, gateway_prober_name, prober_name
from ..common.podspec import container_security, pod_security, requests
from ..common.quota import ContainerRequests, PodSet, PodShape
from ..common.spread import ZONE_LABEL
from .observability_settings import ObservabilitySettings

# --------------------------------------------------------------------------- facts

PROBER_IMAGE = PINS["blackbox-exporter"].value
"""The blackbox exporter's image (the version set's ``blackbox-exporter``)."""
PROBER_PORT = 9115
"""The exporter's listen port: ``--web.listen-address`` defaults to ``:9115`` (prometheus/blackbox_exporter@v0.28.0
main.go l.60 ``webflag.AddFlags(kingpin.CommandLine, ":9115")``; Dockerfile l.11 ``EXPOSE 9115``)."""
PROBE_PATH = "/probe"
"""The path that runs a probe of the ``target`` parameter with the ``module`` parameter's configuration and answers
its metrics (main.go l.207-212; prober/handler.go l.54, l.87-91: 400 without a target)."""
HEALTH_PATH = "/-/healthy"
"""Answers 200 while the exporter runs (main.go l.203-206)."""
MODULE = "completion"
"""The name of the exporter's one module (its configuration's ``modules``), the probe's ``module`` parameter."""
CONFIG_DIR, CONFIG_FILE = "/config", "blackbox.yml"
"""Where the ConfigMap is mounted, and its key: the image's command reads ``--config.file`` (Dockerfile l.12-13
``ENTRYPOINT ["/bin/blackbox_exporter"]``, ``CMD ["--config.file=/etc/blackbox_exporter/config.yml"]``), which the
container's arguments replace."""
PROBE_INTERVAL_SECONDS = 60
"""One completion a minute: the PodMonitoring's ``interval`` for the prober (a :class:`ProbeTarget` may set a
longer one)."""
SCRAPE_MARGIN_SECONDS = 5
"""The PodMonitoring's ``timeout`` is the module's plus this: it must not be larger than its interval
(GoogleCloudPlatform/prometheus-engine v0.17.2 podmonitorings CRD, ``spec.endpoints[].timeout``, l.428-433 of the
reference copy, "Must not be larger than the scrape interval", and the endpoint's rule l.556-559, ``!has(self.timeout)
|| self.timeout <= self.interval``). Prometheus sends it to the exporter as ``X-Prometheus-Scrape-Timeout-Seconds``."""
PROBE_TIMEOUT_SECONDS = 50
"""The module's ``timeout``: how long the request may take before the probe fails. The exporter takes it only while it
is below the scrape timeout less ``--timeout-offset`` (0.5 s), else that (prometheus/blackbox_exporter@v0.28.0
prober/handler.go l.269-289 ``getTimeout``, main.go l.52), so the scrape timeout is the module's plus
:data:`SCRAPE_MARGIN_SECONDS`: the probe answers before the scrape gives up and a hung engine shows as
``probe_success`` 0, not as a failed scrape."""
SCRAPE_TIMEOUT_SECONDS = PROBE_TIMEOUT_SECONDS + SCRAPE_MARGIN_SECONDS
"""The PodMonitoring's ``timeout`` of a probe with the default module timeout (55 s, within the 60 s interval)."""
PROBE_SUCCESS = "probe_success"
PROBE_DURATION = "probe_duration_seconds"
"""The gauges every probe answers: 1 when the probe succeeded, and how long it took (prober/handler.go l.78-85)."""
PROBER_USER = 65534
"""A fixed non-root user: the image's Dockerfile sets no ``USER`` (v0.28.0 Dockerfile l.1-13), so it would run as
root. The exporter writes no file and reads its configuration from the mounted ConfigMap (mode 0644 by default), so
any user runs it; 65534 is ``nobody`` by convention."""
PROBER_CPU, PROBER_MEMORY = "50m", "64Mi"
"""The exporter's requests (memory also its limit): one probe a minute, one small response read. No upstream sizing
was read; these are this library's choice."""
PROBER_REPLICAS = 2
"""The exporter's replicas (SRE review: a single-replica prober): each probes on its own, so one node's or one zone's
loss leaves the other probing, and the probe alerts read every replica's series together (:func:`failing_query`,
:func:`part_query`, :func:`missing_query`): a replica that is down neither pages nor silences them. Each replica sends
its own request, so the serving answers :data:`PROBER_REPLICAS` probes per interval (and as many through a Gateway)."""
HOST_LABEL = "kubernetes.io/hostname"
"""The node label of its host: "If TopologyKey is "kubernetes.io/hostname", each Node is a domain of that topology"
(k8s.io/api v0.36.3 core/v1/types.go l.4703)."""
PROBE_ANNOTATION = "tpu-serving.dev/probe"
"""The prober's Deployment annotation saying what the probe sends and what it does not cover (:func:`probe_text`),
which the preview prints on its ``Probe:`` line."""
CONFIG_CHECKSUM = "tpu-serving.dev/config-checksum"
"""Pod template annotation holding the sha256 of the module configuration, so a change of it rolls the pod: the
exporter reads its file at start and again only on SIGHUP, a ``/-/reload`` request or, with
``--config.enable-auto-reload`` (off by default), every 30 s (main.go l.55-56, l.142-174); the endpoint picker's
Deployment does the same (:data:`tpu_serving.traffic.epp.EPP_CONFIG_CHECKSUM`)."""

FAILING_KEY, SLOW_KEY = "probe-failing", "probe-slow"
FAILING_SEVERITY = "CRITICAL"
"""A completion through the serving path has failed for minutes: the stack serves nothing a client can use."""
PART_KEY, MISSING_KEY, GATEWAY_KEY = "probe-failing-part", "probe-missing", "probe-gateway-failing"
GATEWAY_PART_KEY = "probe-gateway-failing-part"
PART_SEVERITY = "ERROR"
"""Some completions fail: less is served (one hung group among several, which the Service's kube-proxy picks for
about its share of the probes)."""
PART_WINDOW_MINUTES, PART_SUCCESS_BELOW = 15, 0.9
"""The share of the probes that succeeded over the last 15 minutes (15 probes per replica, 30 of the two; 12 and 24
at Saxml's 75 s interval) below 0.9: four failures or more of 30 (three of 24). One hung group of N takes about 1/N
of the probes, so a hung group among up to 9 shows; three lost probes of 30 (two of 24) do not. The library's
choice, not an upstream figure."""
MISSING_SEVERITY = "ERROR"
"""The probe's series are missing (the exporter is down or not scraped): the probe alerts cannot fire."""
MISSING_WINDOW_MINUTES = 10
SLOW_SEVERITY = "WARNING"
"""Completions succeed but slowly: clients wait, nothing is down yet."""


@dataclass(frozen=True)
class ProbeTarget:
    """The request the prober sends a backend's serving Service, and the answer it expects."""

    server: str
    """What answers, for the runbook (``vLLM's OpenAI-compatible server``)."""
    service: str
    """The ClusterIP Service in front of the engine, in the serving namespace."""
    port: int
    """Its port."""
    path: str
    """The request's path (``/v1/completions``)."""
    body: str
    """The request's JSON body: a 1-token completion of the served model."""
    answer: str
    """RE2 pattern the response's body must match (the exporter's ``fail_if_body_not_matches_regexp``)."""
    covers: str
    """What the request goes through, and what it does not, for the preview, the runbook and the docs."""
    request: str = "a 1-token completion"
    """What the request is, in the runbooks' words."""
    timeout_seconds: int = PROBE_TIMEOUT_SECONDS
    """The module's ``timeout`` (:data:`PROBE_TIMEOUT_SECONDS`); the scrape's is :data:`SCRAPE_MARGIN_SECONDS` more,
    within :attr:`interval_seconds`."""
    interval_seconds: int = PROBE_INTERVAL_SECONDS
    """How often the probe is sent: its PodMonitoring's ``interval``."""
    slow_alert: bool = True
    """Whether the probe-slow alert applies: its threshold (``observability.probeSlowSeconds``) is set for a 1-token
    completion."""
    find_part: str = (
        "the Service sends each probe to one leader, so one hung or failing group among several fails about its share. "
        "Find the group: port-forward each leader pod and send the same request."
    )
    """How the probes spread over the serving pods and how to find the one failing, for the failing-in-part alert."""
    remedy: str = (
        "Then read the engine's logs: `kubectl -n {namespace} logs <leader pod>`. A Ready pod whose engine answers no "
        "completion is hung: delete its leader pod to recreate its group."
    )
    """Where to look next and what to do, for the probe alerts (``{namespace}``: the serving namespace)."""

    @property
    def scrape_timeout_seconds(self) -> int:
        """The PodMonitoring's ``timeout``: the module's plus :data:`SCRAPE_MARGIN_SECONDS`."""
        return self.timeout_seconds + SCRAPE_MARGIN_SECONDS

    @property
    def url(self) -> str:
        """The probe's ``target``: the Service by its bare name, which the prober's pod resolves in its own
        namespace, the serving namespace (its resolv.conf search path: "a DNS query ... for ``data`` in namespace
        ``test`` ... returns ``data.test.svc.cluster.local``", https://kubernetes.io/docs/concepts/services-networking/
        dns-pod-service/#namespaces-of-services)."""
        return f"http://{self.service}:{self.port}{self.path}"


# --------------------------------------------------------------------------- builders


def probe_text(target: ProbeTarget, gateway: str | None = None) -> str:
    """What the probe sends, how often, and what it covers (:data:`PROBE_ANNOTATION`); ``gateway``: the name of the
    Gateway's address, which a second probe goes through."""
    text = f"POST {target.url} {target.body} every {target.interval_seconds} s; {target.covers}"
    if gateway is None:
        return text
    return (
        f"{text}; and the same request through the Gateway's address {gateway} ({GATEWAY_COVERS}), "
        f"job {gateway_prober_name(target.service)}"
    )


GATEWAY_COVERS = "the clients' path: the load balancer, the endpoint picker if any, the engine"


def scrape_endpoint(target: ProbeTarget, url: "pulumi.Input[str]") -> dict[str, object]:
    """The PodMonitoring endpoint's fields of ``target``'s probe of ``url``: its ``params`` (HTTP GET parameters of
    the scrape, a map of string lists: v0.17.2 podmonitorings CRD ``spec.endpoints[].params``, l.389-394 of the
    reference copy), the module and the target, at the target's interval, within the scrape timeout."""
    return {
        "params": {"module": [MODULE], "target": [url]},
        "interval": f"{target.interval_seconds}s",
        "timeout": f"{target.scrape_timeout_seconds}s",
    }


def gateway_url(target: ProbeTarget, address: "pulumi.Input[str]", port: int) -> pulumi.Output[str]:
    """The probe's request through the Gateway: its address and listener port, the same path. A None address (an
    inputs-only mock's in ``up``; GCP always returns one) reads as empty (library review 15, M1: a TypeError)."""
    return pulumi.Output.from_input(address).apply(lambda a: f"http://{a or ''}:{port}{target.path}")


def prober_labels(target: ProbeTarget) -> dict[str, str]:
    """The prober's pod labels (its Deployment's selector, its PodMonitoring's and its scrape policy's)."""
    return {"app": prober_name(target.service)}


def prober_config(target: ProbeTarget) -> str:
    """The exporter's configuration: one ``http`` module that POSTs the completion and fails unless the answer is a
    200 whose body matches :attr:`ProbeTarget.answer` (prometheus/blackbox_exporter@v0.28.0 CONFIGURATION.md
    ``<module>`` l.55-72: ``prober``, ``timeout``, ``http``; ``<http_probe>`` l.74-211: ``valid_status_codes``,
    ``method``, ``headers``, ``fail_if_body_not_matches_regexp``, ``preferred_ip_protocol``, ``body``). IPv4 first:
    the default is ``ip6`` (l.203), and a Service's ClusterIP is IPv4 on a cluster that is not dual-stack."""
    module = {
        "prober": "http",
        "timeout": f"{target.timeout_seconds}s",
        "http": {
            "method": "POST",
            "headers": {"Content-Type": "application/json"},
            "body": target.body,
            "valid_status_codes": [200],
            "fail_if_body_not_matches_regexp": [target.answer],
            "preferred_ip_protocol": "ip4",
        },
    }
    return yaml.safe_dump({"modules": {MODULE: module}}, sort_keys=False, width=1000)


def prober_config_map(target: ProbeTarget, namespace: str, labels: Mapping[str, str]) -> k8s.core.v1.ConfigMapInitArgs:
    """The ConfigMap holding :func:`prober_config`."""
    return k8s.core.v1.ConfigMapInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=prober_name(target.service), namespace=namespace, labels=dict(labels)),
        data={CONFIG_FILE: prober_config(target)},
    )


def prober_pods() -> PodSet:
    """The prober's pods in the serving namespace, for the quota (:mod:`tpu_serving.common.quota`): :data:`PROBER_REPLICAS`,
    and a new one during a rollout (a Deployment's default ``maxSurge`` of 25% of two, rounded up: one)."""
    container = ContainerRequests("blackbox-exporter", PROBER_CPU, PROBER_MEMORY)
    return PodSet("Deployment of the serving probe", (PodShape("prober", 1, (container,)),), PROBER_REPLICAS, surge=1)


def prober_spread(target: ProbeTarget) -> list[k8s.core.v1.TopologySpreadConstraintArgs]:
    """The replicas apart, preferred: over the zones of the CPU pool, then over its nodes, each counting the prober's
    own pods (its labels). ``maxSkew`` 1, the most even spread (k8s.io/api v0.36.3 core/v1/types.go l.4675-4695);
    ``topologyKey`` a node label whose value names the domain (l.4696-4706; ``topology.kubernetes.io/zone``, the
    zone, :data:`~tpu_serving.common.spread.ZONE_LABEL`); ``whenUnsatisfiable: ScheduleAnyway``, "schedule the pod in any
    location, but giving higher precedence to topologies that would help reduce the skew" (l.4707-4728), so a pool
    in one zone, or a zone down, never keeps a replica Pending; ``labelSelector``, the pods counted (l.4729-4733).
    The two constraints differ in ``topologyKey``, the list's map key with ``whenUnsatisfiable`` (l.4364-4367)."""

    def constraint(key: str) -> k8s.core.v1.TopologySpreadConstraintArgs:
        return k8s.core.v1.TopologySpreadConstraintArgs(
            max_skew=1,
            topology_key=key,
            when_unsatisfiable="ScheduleAnyway",
            label_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=prober_labels(target)),
        )

    return [constraint(ZONE_LABEL), constraint(HOST_LABEL)]


def prober_deployment(
    target: ProbeTarget, namespace: str, labels: Mapping[str, str], gateway: str | None = None
) -> k8s.apps.v1.DeploymentInitArgs:
    """:data:`PROBER_REPLICAS` exporters apart (:func:`prober_spread`), hardened as the endpoint picker is: no token (it calls no Kubernetes API), a fixed non-root
    user, a read-only root filesystem, every capability dropped (an ``http`` probe needs none; only ``icmp`` would),
    probed on its own health path."""
    name = prober_name(target.service)
    health = k8s.core.v1.HTTPGetActionArgs(path=HEALTH_PATH, port=PROBER_PORT)
    container = k8s.core.v1.ContainerArgs(
        name="blackbox-exporter",
        image=PROBER_IMAGE,
        args=[f"--config.file={CONFIG_DIR}/{CONFIG_FILE}"],
        ports=[k8s.core.v1.ContainerPortArgs(name="http", container_port=PROBER_PORT)],
        liveness_probe=k8s.core.v1.ProbeArgs(http_get=health, period_seconds=30),
        readiness_probe=k8s.core.v1.ProbeArgs(http_get=health, period_seconds=10),
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name="config", mount_path=CONFIG_DIR, read_only=True)],
        resources=requests(PROBER_CPU, PROBER_MEMORY, memory_limit=True),
        security_context=container_security(run_as_user=PROBER_USER, read_only_root=True),
    )
    checksum = hashlib.sha256(prober_config(target).encode()).hexdigest()
    return k8s.apps.v1.DeploymentInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=name,
            namespace=namespace,
            labels=dict(labels),
            annotations={PROBE_ANNOTATION: probe_text(target, gateway)},
        ),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            replicas=PROBER_REPLICAS,
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=prober_labels(target)),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    labels={**labels, **prober_labels(target)}, annotations={CONFIG_CHECKSUM: checksum}
                ),
                spec=k8s.core.v1.PodSpecArgs(
                    automount_service_account_token=False,
                    security_context=pod_security(),
                    priority_class_name=SERVING_PRIORITY,
                    containers=[container],
                    topology_spread_constraints=prober_spread(target),
                    volumes=[
                        k8s.core.v1.VolumeArgs(
                            name="config", config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=name)
                        )
                    ],
                ),
            ),
        ),
    )


def _series(cluster: str, namespace: str, job: str) -> str:
    """Matchers of the prober's series of one job as managed collection labels them (``job``: its PodMonitoring's
    name: :func:`~tpu_serving.common.naming.prober_name` for the Service probe, :func:`~tpu_serving.common.naming.gateway_prober_name`
    for the Gateway probe)."""
    return f'{{cluster="{cluster}", namespace="{namespace}", job="{job}"}}'


def failing_query(cluster: str, namespace: str, job: str) -> str:
    """No replica's probe succeeded at its last scrape (the policy holds it for its minutes): ``max`` over the
    replicas' series, so a replica that is down, or whose own probes fail, does not fire it while the other's
    succeed."""
    return f"max({PROBE_SUCCESS}{_series(cluster, namespace, job)}) < 1"


def part_query(cluster: str, namespace: str, job: str) -> str:
    """Fewer than :data:`PART_SUCCESS_BELOW` of the last :data:`PART_WINDOW_MINUTES` minutes' probes succeeded: the
    probes of every replica pooled, each counted once (the successes over the probes, both summed over the replicas'
    series), so the share neither counts a probe twice nor moves when a replica is down (its series then only stops
    adding probes). A replica whose own probes all fail (its node's network) halves it and fires this, not the failing
    alert: ``probe_success`` by ``pod`` tells it from a hung group, which fails about 1/N of each replica's."""
    where = _series(cluster, namespace, job)
    window = f"{PROBE_SUCCESS}{where}[{PART_WINDOW_MINUTES}m]"
    return f"sum(sum_over_time({window})) / sum(count_over_time({window})) < {PART_SUCCESS_BELOW:g}"


def missing_query(cluster: str, namespace: str, job: str) -> str:
    """No probe result of any replica recorded for :data:`MISSING_WINDOW_MINUTES` minutes: every exporter is down or
    not scraped (one replica down leaves the other's series; the serving namespace's not-ready ticket sees its pod)."""
    return f"absent_over_time({PROBE_SUCCESS}{_series(cluster, namespace, job)}[{MISSING_WINDOW_MINUTES}m])"


def slow_query(cluster: str, namespace: str, job: str, settings: ObservabilitySettings) -> str:
    """A probe that succeeded, slower than ``observability.probeSlowSeconds`` (a failed one is the other alert's), of
    any replica."""
    where = _series(cluster, namespace, job)
    slow = f"{PROBE_DURATION}{where} > {settings.probe_slow_seconds:g}"
    return f"max(({slow}) and ({PROBE_SUCCESS}{where} == 1))"


def _every(target: ProbeTarget) -> str:
    """How often the probe runs, in the runbooks' words."""
    seconds = target.interval_seconds
    return "every minute" if seconds == 60 else f"every {seconds} s"


def _check(namespace: str, target: ProbeTarget, url: str, job: str) -> str:
    """How to read why a probe failed (the exporter keeps its last probes with their logs and serves them on its own
    page: blackbox_exporter v0.28.0 main.go l.57, l.84 ``--history.limit`` 100, l.242 ``/logs``; and it answers
    probe_http_status_code, prober/http.go l.323)."""
    name = prober_name(target.service)
    return (
        f"The probe POSTs {target.request} to {url} from each of the {PROBER_REPLICAS} pods of Deployment {name} "
        f"{_every(target)}. Read why it failed: probe_http_status_code of job {job} in Metrics Explorer (by pod), "
        f"or each exporter's last probes and their logs (`kubectl -n {namespace} get pods -l app={name}`; `kubectl -n "
        f"{namespace} port-forward pod/<prober pod> {PROBER_PORT}`, then http://localhost:{PROBER_PORT})."
    )


def probe_alerts(
    cluster: str,
    namespace: str,
    target: ProbeTarget | None,
    settings: ObservabilitySettings,
    gateway: str | None = None,
) -> list[tuple[str, str, str, int, str, str]]:
    """``(key, title, query, minutes, runbook, severity)`` of the probe's alerts (an
    :class:`~tpu_serving.operations.observability.Alert`), none without a probe; ``gateway``: the name of the Gateway's address,
    which a second probe goes through (:func:`tpu_serving.operations.serving_metrics.through_gateway`)."""
    if target is None:
        return []
    failing, slow = settings.probe_failing_minutes, settings.probe_slow_minutes
    job = prober_name(target.service)
    check = (
        f"{_check(namespace, target, target.url, job)} {target.covers[:1].upper()}{target.covers[1:]}. "  # SRE 30, m2
        f"{target.remedy.format(namespace=namespace)}"
    )
    found = [
        (
            FAILING_KEY,
            "Serving probe failing",
            failing_query(cluster, namespace, job),
            failing,
            f"No completion sent through the serving Service of {target.server} in namespace {namespace} has "
            f"succeeded for {failing} minutes: clients get nothing usable, though the pods may be Ready (a hung "
            f"engine), and no error is counted. It also fires while the first groups load after a deploy. {check}",
            FAILING_SEVERITY,
        ),
        (
            PART_KEY,
            "Serving probe failing in part",
            part_query(cluster, namespace, job),
            failing,
            f"Fewer than {PART_SUCCESS_BELOW:.0%} of the completions sent through the serving Service of "
            f"{target.server} in namespace {namespace} over {PART_WINDOW_MINUTES} minutes succeeded: "
            f"{target.find_part} {check}",
            PART_SEVERITY,
        ),
        (
            MISSING_KEY,
            "Serving probe missing",
            missing_query(cluster, namespace, job),
            failing,
            f"No result of the serving probe (job {job}) has been recorded for {MISSING_WINDOW_MINUTES} minutes: the "
            f"exporter's pod is down, or its PodMonitoring is not scraped, and the probe alerts cannot fire. "
            f"`kubectl -n {namespace} get deploy,pods -l app={job}`; `kubectl -n {namespace} describe podmonitoring {job}`.",
            MISSING_SEVERITY,
        ),
    ]
    if target.slow_alert:
        found.append(
            (
                SLOW_KEY,
                "Serving probe slow",
                slow_query(cluster, namespace, job, settings),
                slow,
                f"A 1-token completion through the serving Service of {target.server} in namespace {namespace} has "
                f"taken more than {settings.probe_slow_seconds:g} s for {slow} minutes: requests queue (see the "
                f"dashboard's queue and time to first token) or an engine is degraded. {check}",
                SLOW_SEVERITY,
            )
        )
    if gateway is not None:
        found += _gateway_alerts(cluster, namespace, target, gateway, failing)
    return found


def _gateway_alerts(
    cluster: str, namespace: str, target: ProbeTarget, gateway: str, minutes: int
) -> list[tuple[str, str, str, int, str, str]]:
    """Completions through the Gateway's address fail: all of them (clients get nothing, whatever the engines do), or
    some (the load balancer's or the picker's 502, 503, 504 for part of the requests: no error count the stack reads
    sees them, SRE review round 40, M7)."""
    job = gateway_prober_name(target.service)
    url = f"http://<address {gateway}>{target.path}"
    where = (
        "If the Service probe (probe-failing) passes, the engines serve and the load balancer or the endpoint picker "
        f"fails: `kubectl -n {namespace} get gateway,httproute,inferencepool -o wide` (Programmed, Accepted, "
        f"ResolvedRefs); the picker's pods and its Lease (`kubectl -n {namespace} get lease`; a fail-closed pool refuses "
        "every request while no replica holds it); the load balancer's backend health in the Cloud console. "
        f"{_check(namespace, target, url, job)}"
    )
    return [
        (
            GATEWAY_KEY,
            "Serving probe through the Gateway failing",
            failing_query(cluster, namespace, job),
            minutes,
            f"No completion sent through the Gateway's address {gateway} (namespace {namespace}) has succeeded for "
            f"{minutes} minutes: clients get nothing usable. {where}",
            FAILING_SEVERITY,
        ),
        (
            GATEWAY_PART_KEY,
            "Serving probe through the Gateway failing in part",
            part_query(cluster, namespace, job),
            minutes,
            f"Fewer than {PART_SUCCESS_BELOW:.0%} of the completions sent through the Gateway's address {gateway} "
            f"(namespace {namespace}) over {PART_WINDOW_MINUTES} minutes succeeded: part of the clients' requests "
            f"fail (a 502 on a keepalive race, a 503; not a 504 after the request timeout: this probe asks for one token, "
            f"and the Gateway error rate alert reads those). {where}",
            PART_SEVERITY,
        ),
    ]


# --------------------------------------------------------------------------- objects


def create(
    name: str,
    namespace: str,
    target: ProbeTarget | None,
    labels: Mapping[str, str],
    opts: pulumi.ResourceOptions,
    gateway: str | None = None,
) -> None:
    """The prober's ConfigMap and Deployment (its PodMonitorings are the stack's, with the others), none without a
    probe."""
    if target is None:
        return
    k8s.core.v1.ConfigMap(f"{name}-prober-config", prober_config_map(target, namespace, labels), opts=opts)
    k8s.apps.v1.Deployment(f"{name}-prober", prober_deployment(target, namespace, labels, gateway), opts=opts)
