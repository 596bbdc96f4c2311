"""Observability: what each backend has scraped, the dashboard's panels, the alert policies,
their settings and their dependencies, and the NetworkPolicy that lets the collectors in."""

from __future__ import annotations

import copy
import json
import re

import pytest

from tests.conftest import ROOT, STACKS, plan_of, resource
from tests.fixtures.components import _components, _descendants
from tests.fixtures.configs import SERVING, VLLM, load, plan_edited
from tpu_serving.backends import BACKENDS
from tpu_serving.common.settings import to_settings
from tpu_serving.config import ConfigError, StackConfig, load_stack_config
from tpu_serving.operations.observability import (
    GMP_COLLECTOR_LABELS,
    Scope,
    ScrapeTarget,
    ServingMetrics,
    alert_policy_args,
    alerts,
    charts,
    dashboard_json,
    pod_monitoring,
)
from tpu_serving.operations.observability_settings import ObservabilitySettings, Severity
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.stack import alert_summary
from tpu_serving_tools.preview.stack_files import load_project, stack_config
from tpu_serving_tools.reference import schema
from tpu_serving_tools.runtime import network, prereqs
from tpu_serving_tools.runtime.planview import PlanView

VLLM_STACK = "vllm-llama33-70b-v5e16"
JETSTREAM_STACK = "llama31-405b-v6e16"
SAX_STACK = "saxml-175b-v5e32x2"
BATCH_STACK = "pathwaysjob-batch-v6e16"
SCOPE = Scope("c", "ns")
POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"


def _metrics(stack: str) -> ServingMetrics:
    serving = load_stack(stack).serving
    return BACKENDS[serving.backend].metrics(serving)


def load_stack(stack: str) -> StackConfig:
    return load_stack_config(stack_config(load_project(ROOT), stack))


def _objects(stack: str, kind: str) -> list[dict]:
    return [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == kind]


def _promql_conditions(plan) -> list[dict]:
    """The PromQL conditions of the plan's alert policies (the group-recreation alert has a threshold condition)."""
    conditions = [c for r in plan.of_type(POLICY) for c in r.inputs["conditions"]]
    return [c["conditionPrometheusQueryLanguage"] for c in conditions if "conditionPrometheusQueryLanguage" in c]


def _tiles(plan) -> list[dict]:
    (dash,) = plan.of_type(DASHBOARD)
    return json.loads(dash.inputs["dashboardJson"])["mosaicLayout"]["tiles"]


# ------------------------------------------------------------------------- what is scraped


def test_observability_vllm_scrapes_the_leaders_metrics_path_on_8000():
    # the second is the endpoint picker's (tests/components/traffic/test_gateway.py)
    (pm,) = [p for p in _objects(VLLM_STACK, "PodMonitoring") if p["metadata"]["name"] == "vllm-leaders"]
    assert pm["spec"]["selector"]["matchLabels"] == {"leaderworkerset.sigs.k8s.io/name": "vllm", "role": "leader"}
    assert pm["spec"]["endpoints"] == [{"port": 8000, "path": "/metrics", "interval": "15s"}]
    assert pm["metadata"]["namespace"] == load_stack(VLLM_STACK).workload_identity.namespace


def test_observability_jetstream_enables_and_scrapes_the_prometheus_port():
    # the other is the serving probe's (tests/components/operations/test_prober.py)
    probes = ("-prober", "-prober-gateway")
    (pm,) = [p for p in _objects(JETSTREAM_STACK, "PodMonitoring") if not p["metadata"]["name"].endswith(probes)]
    assert pm["spec"]["endpoints"][0]["port"] == 9090 and pm["spec"]["endpoints"][0]["path"] == "/"
    (lws,) = _objects(JETSTREAM_STACK, "LeaderWorkerSet")
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert pm["spec"]["selector"]["matchLabels"].items() <= leader["metadata"]["labels"].items()
    (jax,) = [c for c in leader["spec"]["containers"] if c["name"] == "jax-tpu"]
    assert "prometheus_port=9090" in jax["args"]
    assert {"name": "metrics", "containerPort": 9090} in jax["ports"]


def test_observability_jetstream_without_prometheus_port_scrapes_nothing():
    plan = plan_edited(JETSTREAM_STACK, serving=lambda s: s["maxtext"].update(prometheusPort=None))
    monitorings = [r.inputs["metadata"]["name"] for r in plan.resources if r.type.endswith(":PodMonitoring")]
    assert monitorings == ["jetstream-svc-prober", "jetstream-svc-prober-gateway"]  # the serving probe's only
    assert "prometheus_port=9090" not in json.dumps([r.inputs for r in plan.resources])


@pytest.mark.parametrize(("stack", "probe"), [(SAX_STACK, ["sax-http-lb-prober"]), (BATCH_STACK, [])])
def test_observability_backends_without_an_exporter_scrape_nothing(stack, probe):
    """Saxml and a PathwaysJob export no metrics; Saxml's only PodMonitoring is the serving probe's
    (tests/components/operations/test_prober.py)."""
    assert [o["metadata"]["name"] for o in _objects(stack, "PodMonitoring")] == probe
    assert _metrics(stack).scrape == () and _metrics(stack).signals is None


def test_observability_pod_monitoring_validates_against_the_crd_and_rejects_unknown_fields(reference):
    obj = pod_monitoring(ScrapeTarget("x", {"a": "b"}, 8000), "ns", 15, {})
    schema.validate_custom(obj, schema.PLATFORM_RELEASES["monitoring.googleapis.com"])
    obj["spec"]["endpoints"][0]["intervall"] = "15s"
    with pytest.raises(schema.SchemaError, match="intervall"):
        schema.validate_custom(obj, "v0.17.2")


# ------------------------------------------------------------------------- dashboard


def test_observability_dashboard_vllm_has_serving_and_tpu_panels():
    tiles = _tiles(plan_of(VLLM_STACK))
    titles = [t["widget"]["title"] for t in tiles]
    assert titles == [
        "Requests running and waiting",
        "Time to first token (p50, p99)",
        "Time per output token (p50, p99)",
        "KV-cache use",
        "TPU duty cycle by pod",
        "TPU HBM in use by pod",
        "Leader-worker group recreations per hour",
    ]
    data_sets = [d["timeSeriesQuery"] for t in tiles for d in t["widget"]["xyChart"]["dataSets"]]
    queries = [q["prometheusQuery"] for q in data_sets if "prometheusQuery" in q]
    assert len(queries) == len(data_sets) - 1  # the recreations' chart reads the stack's log-based metric
    assert 'sum(vllm:num_requests_waiting{cluster="vllm70b", namespace="vllm-llama70b"})' in queries
    assert any("vllm:inter_token_latency_seconds_bucket" in q for q in queries)
    assert any(q.startswith("avg by (pod_name) (kubernetes_io:container_accelerator_duty_cycle{") for q in queries)
    assert all(t["xPos"] + t["width"] <= 48 for t in tiles)


@pytest.mark.parametrize("stack", [SAX_STACK, BATCH_STACK])
def test_observability_dashboard_without_serving_metrics_shows_only_tpu_panels(stack):
    assert [t["widget"]["title"] for t in _tiles(plan_of(stack))] == ["TPU duty cycle by pod", "TPU HBM in use by pod"]


def test_observability_dashboard_json_is_built_from_the_charts():
    text = dashboard_json("t", charts(SCOPE, None))
    data = json.loads(text)
    assert data["displayName"] == "t" and data["mosaicLayout"]["columns"] == 48
    assert [t["yPos"] for t in data["mosaicLayout"]["tiles"]] == [0, 0]
    assert [t["xPos"] for t in data["mosaicLayout"]["tiles"]] == [0, 24]


# ------------------------------------------------------------------------- alerts


@pytest.mark.parametrize(
    ("stack", "keys"),
    [
        (
            VLLM_STACK,
            [
                "autoscaler_stuck",
                "backlog",
                "below_minimum",
                "capacity_reduced",
                "controller_unavailable",
                "error_rate",
                "gateway_errors",
                "gateway_errors_unread",
                "gateway_near_timeout",
                "maintenance_gate_silent",
                "metrics_missing",
                "no_ready_leader",
                "not_ready",
                "probe_failing",
                "probe_failing_part",
                "probe_gateway_failing",
                "probe_gateway_failing_part",
                "probe_missing",
                "probe_slow",
                "router_errors",
                "router_not_ready",
                "slow_first_token",
                "stalled",
                "tpu_idle",
            ],
        ),
        (
            JETSTREAM_STACK,
            [
                "backlog",
                "controller_unavailable",
                "gateway_errors",
                "gateway_errors_unread",
                "gateway_near_timeout",
                "metrics_missing",
                "no_ready_leader",
                "not_ready",
                "probe_failing",
                "probe_failing_part",
                "probe_gateway_failing",
                "probe_gateway_failing_part",
                "probe_missing",
                "probe_slow",
                "slow_first_token",
                "tpu_idle",
            ],
        ),
        (
            SAX_STACK,
            [
                "controller_unavailable",
                "job_not_running",
                "no_ready_leader",
                "not_ready",
                "probe_failing",
                "probe_failing_part",
                "probe_missing",
            ],
        ),
        (BATCH_STACK, ["controller_unavailable", "job_not_running"]),
    ],
)
def test_observability_alerts_render_only_where_their_signals_exist(stack, keys):
    rendered = sorted(c["alertRule"] for c in _promql_conditions(plan_of(stack)))
    assert rendered == keys


def test_observability_alert_settings_reach_the_conditions():
    def edit(o: dict) -> None:
        o.update(
            backlogThreshold=7,
            backlogMinutes=3,
            idleDutyCyclePercent=2.5,
            idleMinutes=20,
            notReadyMinutes=90,
            noReadyLeaderMinutes=4,
        )

    plan = plan_edited(VLLM_STACK, observability=edit)
    by_rule = {c["alertRule"]: c for c in _promql_conditions(plan)}
    assert by_rule["backlog"]["query"].endswith("> 7") and by_rule["backlog"]["duration"] == "180s"
    assert " < 2.5) and on(group) (" in by_rule["tpu_idle"]["query"] and by_rule["tpu_idle"]["duration"] == "1200s"
    assert "kube_pod_container_status_ready" in by_rule["not_ready"]["query"]
    assert by_rule["not_ready"]["duration"] == "5400s"
    assert by_rule["no_ready_leader"]["duration"] == "240s"


def test_observability_notification_channels_reach_every_policy():
    channel = "projects/tpu-serving-demo/notificationChannels/42"
    plan = plan_edited(VLLM_STACK, observability=lambda o: o.update(notificationChannels=[channel]))
    policies = plan.of_type(POLICY)
    assert policies and all(r.inputs["notificationChannels"] == [channel] for r in policies)
    assert all(not r.inputs.get("notificationChannels") for r in plan_of(VLLM_STACK).of_type(POLICY))
    n = len(policies)
    counts = {s: sum(r.inputs["severity"] == s for r in policies) for s in ("CRITICAL", "ERROR", "WARNING")}
    assert all(counts.values()) and sum(counts.values()) == n  # every policy ranked, each severity used
    ranked = f"({counts['CRITICAL']} CRITICAL, {counts['ERROR']} ERROR, {counts['WARNING']} WARNING)"
    assert alert_summary(plan.resources) == [
        f"Alerts: {n} alert policies {ranked}: pages notify {channel}; tickets (WARNING) notify {channel}"
    ]
    assert alert_summary(plan_of(VLLM_STACK).resources) == [
        f"Alerts: {n} alert policies {ranked}, and nobody is paged (no notification channel named): they show only "
        "in Cloud Monitoring until one is (observability.notificationChannels in a stack file, "
        "ObservabilitySettings.notification_channels in a program)"
    ]
    assert alert_summary([]) == []


def test_observability_settings_channels_send_warnings_to_ticket_channels():
    """SRE review M1: the pages (CRITICAL, ERROR) and the tickets (WARNING) notify different channels when
    ticketChannels is named; without it the warnings go with the pages."""
    page, ticket = (
        "projects/tpu-serving-demo/notificationChannels/1",
        "projects/tpu-serving-demo/notificationChannels/2",
    )
    plan = plan_edited(
        VLLM_STACK, observability=lambda o: o.update(notificationChannels=[page], ticketChannels=[ticket])
    )
    policies = plan.of_type(POLICY)
    by = {
        r.name.split("-observability-")[-1]: (r.inputs["severity"], r.inputs["notificationChannels"]) for r in policies
    }
    assert by["no-ready-leader"] == ("CRITICAL", [page])
    assert by["stalled"] == ("ERROR", [page]) and by["below-minimum"] == ("ERROR", [page])
    assert by["group-reloading"] == ("WARNING", [ticket]) and by["not-ready"] == ("WARNING", [ticket])
    assert by["metrics-missing"] == ("WARNING", [ticket]) and by["group-recreations"] == ("ERROR", [page])
    assert all(channels == ([ticket] if sev == "WARNING" else [page]) for sev, channels in by.values())
    assert alert_summary(plan.resources)[0].endswith(f"pages notify {page}; tickets (WARNING) notify {ticket}")
    settings = ObservabilitySettings(notification_channels=(page,))
    assert settings.channels(Severity.WARNING) == [page] and settings.channels(Severity.CRITICAL) == [page]


def test_paging_problems_refuse_a_serving_stack_that_pages_nobody_unless_it_says_so():
    """SRE review B1: an empty notificationChannels is a decision the stack file states (observability.unpaged),
    reported with the other problems; a channel, or alert policies the stack does not create, need no statement."""
    from tpu_serving.config.errors import ConfigError

    unsaid = {**VLLM, "tpu-serving:observability": {}, "tpu-serving:tenancy": {"quota": {"cpu": "1"}}}
    with pytest.raises(ConfigError) as err:
        load(unsaid)
    (paging,) = [p for p in err.value.problems if "observability" in p]
    assert paging.startswith("tpu-serving:observability.notificationChannels = []: the stack's alert policies")
    assert "set observability.unpaged to true" in paging and "(valid: true, false)" in paging
    assert len(err.value.problems) == 2  # the quota's problem too: all at once
    channel = "projects/tpu-serving-demo/notificationChannels/42"
    assert load({**VLLM, "tpu-serving:observability": {"notificationChannels": [channel]}}).serving is not None
    assert load({**VLLM, "tpu-serving:observability": {"cloudResources": "existing"}}).serving is not None


def test_observability_disabled_renders_nothing_and_opens_no_scrape_port():
    # Without autoscaling, whose HPA reads the scraped queue (refused with observability off).
    plan = plan_edited(
        VLLM_STACK,
        observability=lambda o: o.update(enabled=False),
        serving=lambda s: (s.pop("autoscaling"), s.update(replicas=3)),
    )
    assert not plan.of_type(POLICY) and not plan.of_type(DASHBOARD)
    assert not plan.of_type("gcp:logging/metric:Metric")  # nor the group recreations' log-based metric
    objects = kubernetes_objects(plan)
    assert not [o for o in objects if o["kind"] == "PodMonitoring"]
    policies = [o["metadata"]["name"] for o in objects if o["kind"] == "NetworkPolicy"]
    assert "serving-ingress" in policies and not [n for n in policies if n.startswith("scrape-")]


def test_observability_alert_policy_args_carry_runbook_and_rule_group():
    cfg = load({**VLLM, "tpu-serving:observability": {"notificationChannels": [], "unpaged": True}})
    settings = to_settings(cfg.observability, ObservabilitySettings)
    (not_ready,) = alerts(SCOPE, ServingMetrics(), settings)
    args = alert_policy_args(not_ready, "c", settings, "p")
    assert args.display_name == "c: Serving pods not ready" and args.combiner == "OR"
    assert "kubectl -n ns get pods" in args.documentation.content


def test_observability_dashboard_and_alerts_wait_for_the_monitoring_api():
    plan = plan_of(VLLM_STACK)
    (service,) = [
        r for r in plan.of_type("gcp:projects/service:Service") if r.inputs["service"] == "monitoring.googleapis.com"
    ]
    for r in plan.of_type(POLICY) + plan.of_type(DASHBOARD):
        assert service.urn in r.dependencies, r.name
    data = plan.as_json()
    for r in data["resources"]:
        if r["type"] == DASHBOARD:
            r["dependencies"] = []
    finding = {f.subject: f for f in prereqs.check(PlanView(data)).findings}["api monitoring.googleapis.com"]
    assert not finding.ok and "not a dependency of vllm70b-observability-dashboard" in finding.reason


# ------------------------------------------------------------------------- the scrape flow


@pytest.mark.parametrize("stack", [VLLM_STACK, JETSTREAM_STACK])
def test_observability_scrape_flow_allowed_only_by_the_scrape_policy(stack):
    data = plan_of(stack).as_json()
    scrape = [f for f in network.check(PlanView(data)).findings if f.subject.startswith("flow gmp-system/collector")]
    # one per PodMonitoring: the leaders', the serving probe's, and the endpoint picker's behind an InferencePool
    assert len(scrape) == (3 if stack == VLLM_STACK else 2)
    assert all(f.ok and "allowed by ingress policy scrape-" in f.reason for f in scrape)
    data["resources"] = [
        r for r in data["resources"] if not (r["type"].endswith("NetworkPolicy") and "-scrape-" in r["name"])
    ]
    denied = [f for f in network.check(PlanView(data)).findings if f.subject in {s.subject for s in scrape}]
    assert len(denied) == len(scrape) and all(not f.ok and "PodMonitoring" in f.reason for f in denied)


def test_observability_scrape_policy_admits_the_collector_pods_only():
    (policy,) = [o for o in _objects(VLLM_STACK, "NetworkPolicy") if o["metadata"]["name"] == "scrape-vllm-leaders"]
    (rule,) = policy["spec"]["ingress"]
    (peer,) = rule["from"]
    assert peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "gmp-system"}
    assert peer["podSelector"]["matchLabels"] == dict(GMP_COLLECTOR_LABELS)
    assert rule["ports"] == [{"protocol": "TCP", "port": 8000}]


def test_observability_cluster_sends_pod_state_metrics():
    cluster = resource(plan_of(VLLM_STACK), "gcp:container/cluster:Cluster", "vllm70b-cluster")
    assert cluster.inputs["monitoringConfig"]["enableComponents"] == ["SYSTEM_COMPONENTS", "POD", "DEPLOYMENT", "HPA"]


@pytest.mark.parametrize("stack", [VLLM_STACK, JETSTREAM_STACK, SAX_STACK])
def test_observability_alerts_are_admitted_on_a_new_project(stack):
    """Cloud Monitoring refuses a PromQL condition whose alertRule or ruleGroup is not a Prometheus label name,
    or whose metrics the project has not ingested yet unless disableMetricValidation is set."""
    conditions = _promql_conditions(plan_of(stack))
    assert conditions
    label = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
    for c in conditions:
        assert label.fullmatch(c["alertRule"]) and label.fullmatch(c["ruleGroup"]), c
        assert c["disableMetricValidation"] is True


def _query(stack: str, suffix: str) -> str:
    (query,) = [
        r.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
        for r in plan_of(stack).of_type(POLICY)
        if r.name.endswith(suffix)
    ]
    return str(query)


def test_observability_not_ready_counts_only_pods_that_should_be_ready():
    """A finished Job's pods keep Ready=False: the query keeps only Pending and Running pods. A pod that never
    scheduled has no container status, so no kube_pod_container_status_ready series (GKE's only pod readiness
    series): it counts unless every container of it is ready, not only when a not-ready series exists."""
    assert _query(SAX_STACK, "-not-ready") == (
        'sum((kube_pod_status_phase{cluster="saxml175b", namespace="saxml", phase=~"Pending|Running"} == 1) '
        "unless on(namespace, pod) (min by (namespace, pod) "
        '(kube_pod_container_status_ready{cluster="saxml175b", namespace="saxml"}) == 1)) > 0'
    )


@pytest.mark.parametrize(
    ("stack", "pods"),
    [
        (SAX_STACK, "sax-model-server-set-sax-model-server-[0-9]+-0-.+"),
        (VLLM_STACK, "vllm-[0-9]+"),
    ],
)
def test_observability_no_ready_leader_fires_within_minutes_also_when_no_pod_exists(stack, pods):
    """``or vector(0)``: a JobSet that failed for good has no pods, so no series; the alert still fires."""
    cluster, namespace = {SAX_STACK: ("saxml175b", "saxml"), VLLM_STACK: ("vllm70b", "vllm-llama70b")}[stack]
    assert _query(stack, "-no-ready-leader") == (
        "(count((min by (namespace, pod) "
        f'(kube_pod_container_status_ready{{cluster="{cluster}", namespace="{namespace}", pod=~"{pods}"}}) == 1)) '
        "or vector(0)) < 1"
    )
    (policy,) = [r for r in plan_of(stack).of_type(POLICY) if r.name.endswith("-no-ready-leader")]
    assert policy.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["duration"] == "300s"


def test_observability_no_ready_leader_absent_for_a_batch_job():
    assert not [r for r in plan_of(BATCH_STACK).of_type(POLICY) if r.name.endswith("-no-ready-leader")]


def test_observability_saxml_publisher_job_is_cleaned_up_after_it_finishes():
    (job,) = [o for o in kubernetes_objects(plan_of(SAX_STACK)) if o["kind"] == "Job"]
    assert job["spec"]["ttlSecondsAfterFinished"] == 3600


def test_observability_roles_alert_on_an_engine_that_stalls_with_requests_in_flight():
    """A wedged disaggregated engine still answers /health (SRE review M3): each role has an alert, per leader pod, on
    requests running or waiting and no generated token (vllm:generation_tokens, a counter: its samples end in _total)
    for observability.stalledMinutes."""
    from tests.conftest import plan_of
    from tpu_serving.operations.observability_roles import RoleSignals, stalled_query

    plan = plan_of("vllm-llama33-70b-disagg-v6e8x2")
    policies = {r.name: r.inputs for r in plan.resources if r.type == "gcp:monitoring/alertPolicy:AlertPolicy"}
    for role in ("prefill", "decode"):
        (condition,) = policies[f"vllmpd70b-observability-stalled-{role}"]["conditions"]
        query = condition["conditionPrometheusQueryLanguage"]["query"]
        where = f'{{cluster="vllmpd70b", namespace="vllm-pd70b", job="vllm-{role}-leaders"}}'
        assert f"sum by (pod) (vllm:num_requests_running{where})" in query
        assert f"sum by (pod) (vllm:num_requests_waiting{where})" in query
        assert f"unless on(pod) (sum by (pod) (increase(vllm:generation_tokens_total{where}[10m])) > 0)" in query
    from tests.fixtures.configs import plan_edited

    edited = plan_edited("vllm-llama33-70b-disagg-v6e8x2", observability=lambda o: o.update(stalledMinutes=20))
    (stalled,) = [r for r in edited.resources if r.name == "vllmpd70b-observability-stalled-decode"]
    assert "[20m]" in stalled.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    bare = RoleSignals("decode", "j", "p", requests_waiting="w", requests_running="r")
    assert stalled_query("c", "n", bare, 10) is None
    single = plan_of("vllm-llama33-70b-v5e16")
    stalled = [r.name for r in single.resources if r.type.endswith("AlertPolicy") and "stalled" in r.name]
    assert stalled == ["vllm70b-observability-stalled"]  # one on the leaders, none per role


def test_observability_not_ready_alert_window_is_given_in_whole_minutes():
    """config.checks.cluster_problems (mutmut_62): the startup window in the message is maxStartupSeconds // 60."""
    cfg = copy.deepcopy(SERVING)
    cfg["tpu-serving:serving"]["probes"] = {"maxStartupSeconds": 3600}
    cfg["tpu-serving:observability"] = {"notReadyMinutes": 30}
    with pytest.raises(ConfigError) as err:
        load(cfg)
    (p,) = [p for p in err.value.problems if "notReadyMinutes" in p]
    assert "may take 60 minutes to start (serving.probes.maxStartupSeconds = 3600)" in p
    assert p.endswith("set it above 60")


def test_observability_of_a_serving_refuses_alerts_that_notify_nobody_as_the_stack_file_does() -> None:
    """Library review 4, M5: a program's Observability with no channel created alert policies that page nobody,
    which a stack file refuses (``observability.unpaged``)."""
    from tpu_serving import ObservabilitySettings, ServingMetrics
    from tpu_serving.backends.vllm.neighbours import leader_metrics
    from tpu_serving.common.validation import argument_problems
    from tpu_serving.operations.observability import ObservabilityArgs

    metrics = leader_metrics("vllm", {"role": "leader"}, 2, ())
    args = ObservabilityArgs(project="my-project-1", cluster="c", namespace="ns", metrics=metrics)
    (problem,) = argument_problems(args)
    assert problem.startswith("ObservabilityArgs.settings.notification_channels = []: the serving's alert policies")
    for settings in (
        ObservabilitySettings(unpaged=True),
        ObservabilitySettings(notification_channels=("projects/my-project-1/notificationChannels/1",)),
    ):
        assert argument_problems(ObservabilityArgs("my-project-1", "c", "ns", metrics, settings)) == []
    assert argument_problems(ObservabilityArgs("my-project-1", "c", "ns", ServingMetrics())) == []  # nothing served


# Observability's registered outputs, held to the resources of the same plan they name.


@pytest.mark.parametrize("stack", STACKS)
def test_observability_outputs_name_its_alert_policies_and_pod_monitorings(stack: str):
    plan = plan_of(stack)
    for obs in _components(plan, "Observability"):
        out = obs.registered_outputs or {}
        below = _descendants(plan, obs)
        alerts = sorted(r.inputs["displayName"] for r in below if r.type == "gcp:monitoring/alertPolicy:AlertPolicy")
        assert sorted(out["alertPolicies"]) == alerts
        monitorings = sorted(r.inputs["metadata"]["name"] for r in plan.resources if r.type.endswith(":PodMonitoring"))
        assert sorted(out["podMonitorings"]) == monitorings
        assert "dashboard" in out
