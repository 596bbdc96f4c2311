"""The serving probe (:mod:`tpu_serving.operations.prober`): the blackbox exporter's module, Deployment and PodMonitoring, its
alerts, which stacks get it, the flows it needs and the setting that turns it off."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.conftest import STACKS, STACKS_ROOT, plan_of
from tests.fixtures.configs import VLLM, load, plan_edited
from tpu_serving.backends import BACKENDS
from tpu_serving.config import ConfigError
from tpu_serving.config.checks import namespace_pods, serving_probe
from tpu_serving.operations import prober
from tpu_serving.operations.observability_settings import ObservabilitySettings
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.stack import probe_summary
from tpu_serving_tools.reference import schema
from tpu_serving_tools.runtime import network
from tpu_serving_tools.runtime.planview import PlanView

VLLM_STACK = "vllm-llama33-70b-v5e16"
DISAGG_STACK = "vllm-llama33-70b-disagg-v6e8x2"
JETSTREAM_STACK = "llama31-405b-v6e16"
PROBED = {
    "llama2-70b-disagg-v6e8x2": "jetstream-svc-prober",
    "llama31-405b-v6e16": "jetstream-svc-prober",
    "saxml-175b-v5e32x2": "sax-http-lb-prober",
    "vllm-llama31-405b-v6e16": "vllm-api-prober",
    "vllm-llama33-70b-disagg-v6e8x2": "vllm-api-prober",
    "vllm-llama33-70b-existing": "vllm-api-prober",
    "vllm-llama33-70b-v5e16": "vllm-api-prober",
}
"""The shipped stacks whose backend takes HTTP completions (vLLM, JetStream, Saxml's sax-http), and their prober;
PathwaysJob gets none."""
TAKES_COMPLETIONS = ("vllm", "jetstream-pathways")
"""Backends whose server takes HTTP completions: a stack of one, shipped or added (docs/add-your-own-model.md), gets a
prober named after its Service; a Saxml stack, one named after sax-http's when it publishes a model."""
SAXML_STACK = "saxml-175b-v5e32x2"


def probed(stack: str) -> str | None:
    """The prober a stack gets: the shipped stacks' as listed, another stack's from its file's backend and Service."""
    if stack in PROBED:
        return PROBED[stack]
    from tpu_serving.config import load_stack_config
    from tpu_serving_tools.preview.stack_files import load_project, stack_config

    serving = load_stack_config(stack_config(load_project(STACKS_ROOT), stack)).serving
    if serving is not None and serving.backend == "saxml":
        return "sax-http-lb-prober" if serving.models else None
    if serving is None or serving.backend not in TAKES_COMPLETIONS:
        return None
    return f"{serving.service_name}-prober"


VLLM_ANSWER = (
    '{"id":"cmpl-1","object":"text_completion","created":1,"model":"meta-llama/Llama-3.3-70B-Instruct",'
    '"choices":[{"index":0,"text":" OK","logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":5}}'
)
"""A vLLM completion as its ``CompletionResponse`` serializes (protocol.py: ``object`` always ``text_completion``)."""


def _objects(stack: str, kind: str) -> list[dict]:
    return [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == kind]


def _vllm_target() -> prober.ProbeTarget:
    target = serving_probe(load(VLLM))
    assert target is not None
    return target


def _module(target: prober.ProbeTarget) -> dict:
    return yaml.safe_load(prober.prober_config(target))["modules"][prober.MODULE]


# ------------------------------------------------------------------------- the module


def test_prober_config_posts_a_one_token_completion_of_the_served_model():
    target = _vllm_target()
    module = _module(target)
    assert (module["prober"], module["timeout"]) == ("http", "50s")
    http = module["http"]
    assert http["method"] == "POST" and http["headers"] == {"Content-Type": "application/json"}
    assert http["valid_status_codes"] == [200] and http["preferred_ip_protocol"] == "ip4"
    body = json.loads(http["body"])
    assert body["max_tokens"] == 1 and body["model"] == load(VLLM).serving.served_model_name
    assert target.url == "http://vllm-api:8000/v1/completions"


def test_prober_config_answer_pattern_matches_a_completion_and_not_an_error():
    (pattern,) = _module(_vllm_target())["http"]["fail_if_body_not_matches_regexp"]
    assert re.search(pattern, VLLM_ANSWER)
    assert re.search(pattern, VLLM_ANSWER.replace('":"', '": "'))  # a server that spaces its JSON
    error = '{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","code":404}'
    assert not re.search(pattern, error)


def test_prober_config_jetstream_generates_one_token_and_expects_a_response():
    (cm,) = [c for c in _objects(JETSTREAM_STACK, "ConfigMap") if c["metadata"]["name"] == PROBED[JETSTREAM_STACK]]
    http = yaml.safe_load(cm["data"][prober.CONFIG_FILE])["modules"][prober.MODULE]["http"]
    assert json.loads(http["body"]) == {"prompt": "Say OK.", "max_tokens": 1}
    assert re.search(http["fail_if_body_not_matches_regexp"][0], '{"response": " OK"}')


SAX_ANSWER = '{\n    "generate_response": [\n        [\n            " OK",\n            -0.03\n        ]\n    ]\n}\n'
"""sax-http v1.0.0's answer: ``json.dumps({"generate_response": res}, indent=4)`` and a newline
(GoogleCloudPlatform/ai-on-gke@10048202 saxml-on-gke/httpserver/http_server.py l.31-36, l.157-160)."""


def _saxml_stack():
    from tpu_serving.config import load_stack_config
    from tpu_serving_tools.preview.stack_files import load_project, stack_config

    return load_stack_config(stack_config(load_project(STACKS_ROOT), SAXML_STACK))


def _saxml_target() -> prober.ProbeTarget:
    target = serving_probe(_saxml_stack())
    assert target is not None
    return target


def test_prober_config_saxml_generates_the_published_model_within_60_s():
    """SRE review round 40, M5: sax-http takes exactly model and query (400 on another key), so the probe decodes
    up to the model's own limit; a 60 s module timeout, the scrape's 65 s within a 75 s interval."""
    target = _saxml_target()
    module = _module(target)
    assert module["timeout"] == "60s"
    http = module["http"]
    assert json.loads(http["body"]) == {"model": _saxml_stack().serving.models[0].model, "query": "Say OK."}
    assert http["method"] == "POST" and http["valid_status_codes"] == [200]
    assert target.url == "http://sax-http-lb:8888/generate"
    (pattern,) = http["fail_if_body_not_matches_regexp"]
    assert re.search(pattern, SAX_ANSWER) and re.search(pattern, '{"generate_response": [["x", -1.0]]}')
    assert not re.search(pattern, '{\n    "Error": "Provide model and query for generate"\n}\n')
    assert not re.search(pattern, '{"generate_response": []}')
    endpoint = prober.scrape_endpoint(target, target.url)
    assert (endpoint["interval"], endpoint["timeout"]) == ("75s", "65s")
    # the exporter keeps the module's timeout only below the scrape's less 0.5 s (handler.go l.282-287)
    assert target.timeout_seconds < target.scrape_timeout_seconds - 0.5 <= target.interval_seconds


def test_prober_saxml_probe_needs_a_published_model():
    serving = _saxml_stack().serving
    assert BACKENDS["saxml"].probe(serving) is not None
    assert BACKENDS["saxml"].probe(serving.model_copy(update={"models": []})) is None


# ------------------------------------------------------------------------- the objects


@pytest.mark.parametrize("stack", sorted(PROBED))
def test_prober_pod_monitoring_scrapes_the_probe_every_minute_and_validates(stack, reference):
    (pm,) = [p for p in _objects(stack, "PodMonitoring") if p["metadata"]["name"] == PROBED[stack]]
    (endpoint,) = pm["spec"]["endpoints"]
    assert endpoint["path"] == "/probe" and endpoint["port"] == 9115
    saxml = stack == SAXML_STACK
    assert (endpoint["interval"], endpoint["timeout"]) == (("75s", "65s") if saxml else ("60s", "55s"))
    assert endpoint["params"]["module"] == ["completion"]
    (target,) = endpoint["params"]["target"]
    assert re.fullmatch(r"http://[a-z0-9-]+:(8000|8888)/(v1/completions|generate)", target)
    schema.validate_custom(pm, schema.PLATFORM_RELEASES["monitoring.googleapis.com"])
    (deployment,) = [d for d in _objects(stack, "Deployment") if d["metadata"]["name"] == PROBED[stack]]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert pm["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_prober_deployment_is_hardened_and_rolls_on_a_config_change():
    target = _vllm_target()
    args = prober.prober_deployment(target, "ns", {"app.kubernetes.io/part-of": "tpu-serving"})
    pod = args.spec.template.spec
    assert pod.automount_service_account_token is False and pod.priority_class_name == "tpu-serving-online"
    assert pod.security_context.seccomp_profile.type == "RuntimeDefault"
    (c,) = pod.containers
    assert c.image == "quay.io/prometheus/blackbox-exporter:v0.28.0"
    assert c.args == ["--config.file=/config/blackbox.yml"]
    sc = c.security_context
    assert (sc.run_as_user, sc.run_as_non_root, sc.read_only_root_filesystem) == (65534, True, True)
    assert sc.allow_privilege_escalation is False and sc.capabilities.drop == ["ALL"] and not sc.capabilities.add
    assert c.resources.limits == {"memory": "64Mi"} and c.readiness_probe.http_get.path == "/-/healthy"
    other = prober.ProbeTarget(**{**target.__dict__, "body": target.body.replace("Say OK.", "Hi.")})
    checksum = prober.CONFIG_CHECKSUM
    assert (
        args.spec.template.metadata.annotations[checksum]
        != prober.prober_deployment(other, "ns", {}).spec.template.metadata.annotations[checksum]
    )


def test_prober_pods_are_in_the_namespace_quota():
    pods = namespace_pods(load(VLLM))
    (probe,) = [p for p in pods if p.name == "Deployment of the serving probe"]
    assert (probe.groups, probe.surge, probe.group[0].containers[0].cpu) == (2, 1, "50m")


def test_prober_deployment_runs_two_replicas_apart_over_zones_and_nodes_preferred():
    """SRE review: one prober pod was one node's or one zone's loss from silencing every probe alert (probe-missing
    then pages, and nothing probes the serving). Two replicas, spread over the zones and the nodes by their own
    labels, ScheduleAnyway: a pool in one zone never keeps one Pending."""
    target = _vllm_target()
    args = prober.prober_deployment(target, "ns", {"app.kubernetes.io/part-of": "tpu-serving"})
    assert args.spec.replicas == prober.PROBER_REPLICAS == 2
    spread = args.spec.template.spec.topology_spread_constraints
    assert [(c.topology_key, c.when_unsatisfiable, c.max_skew) for c in spread] == [
        ("topology.kubernetes.io/zone", "ScheduleAnyway", 1),
        ("kubernetes.io/hostname", "ScheduleAnyway", 1),
    ]
    assert all(c.label_selector.match_labels == {"app": "vllm-api-prober"} for c in spread)
    assert args.spec.selector.match_labels == {"app": "vllm-api-prober"}
    (deployment,) = [d for d in _objects(VLLM_STACK, "Deployment") if d["metadata"]["name"] == "vllm-api-prober"]
    assert deployment["spec"]["replicas"] == 2
    assert len(deployment["spec"]["template"]["spec"]["topologySpreadConstraints"]) == 2


# ------------------------------------------------------------------------- which stacks


@pytest.mark.parametrize("stack", STACKS)
def test_prober_only_on_stacks_whose_backend_takes_http_completions(stack):
    deployments = [
        d["metadata"]["name"] for d in _objects(stack, "Deployment") if d["metadata"]["name"].endswith("-prober")
    ]
    expected = probed(stack)
    assert deployments == ([expected] if expected else [])
    alerts = {
        r.name.split("-observability-", 1)[-1] for r in plan_of(stack).of_type("gcp:monitoring/alertPolicy:AlertPolicy")
    }
    probe_alerts = {"probe-failing", "probe-failing-part", "probe-missing"}
    assert probe_alerts <= alerts if expected else not alerts & {*probe_alerts, "probe-slow"}
    lines = probe_summary(plan_of(stack).resources)
    assert len(lines) == (1 if expected else 0)
    assert all(line.startswith("Probe: POST http://") and " not " in line for line in lines)


def test_prober_pathways_job_backend_declares_no_probe():
    assert BACKENDS["pathways-job"].probe(None) is None


def test_prober_serving_probe_setting_turns_it_off():
    plan = plan_edited(VLLM_STACK, observability=lambda o: o.update(servingProbe=False))
    names = [r.name for r in plan.resources]
    assert not [n for n in names if "prober" in n or "probe-" in n], names
    on = plan_of(VLLM_STACK)
    # Deployment, ConfigMap, the Service's and the Gateway's PodMonitorings, the scrape policy and 7 alerts (failing,
    # failing in part, missing, slow, through the Gateway failing, and failing in part; the Gateway error rate's
    # unread ticket, which reads the probe); the Gateway error rate itself stays
    assert len(plan.resources) == len(on.resources) - 12
    assert any(n.endswith("observability-gateway-errors") for n in names)


# ------------------------------------------------------------------------- alerts


def test_prober_alerts_fail_critical_and_slow_warning_from_the_settings():
    settings = ObservabilitySettings(probe_failing_minutes=7, probe_slow_seconds=12.5, probe_slow_minutes=20)
    failing, _, _, slow = prober.probe_alerts("c", "ns", _vllm_target(), settings)
    assert failing[0] == "probe-failing" and failing[3] == 7 and failing[5] == "CRITICAL"
    assert failing[2] == 'max(probe_success{cluster="c", namespace="ns", job="vllm-api-prober"}) < 1'
    assert slow[0] == "probe-slow" and slow[3] == 20 and slow[5] == "WARNING"
    assert "probe_duration_seconds{" in slow[2] and "> 12.5" in slow[2] and "probe_success{" in slow[2]
    assert "http://vllm-api:8000/v1/completions" in failing[4] and "not through a Gateway" in failing[4]
    assert prober.probe_alerts("c", "ns", None, settings) == []


def test_prober_alerts_part_and_missing_are_errors_and_the_gateway_probe_is_critical():
    """SRE review round 39, B2 (the clients' path unprobed), B1 (one hung group of several is about its share of the
    Service's probes: max() over 5 minutes misses it), m2 (a prober down silences the probe alerts)."""
    settings = ObservabilitySettings(probe_failing_minutes=7)
    alerts = {a[0]: a for a in prober.probe_alerts("c", "ns", _vllm_target(), settings, "vllm70b-vip")}
    series = 'probe_success{cluster="c", namespace="ns", job="vllm-api-prober"}'
    part, missing, gateway = alerts["probe-failing-part"], alerts["probe-missing"], alerts["probe-gateway-failing"]
    pooled = f"sum(sum_over_time({series}[15m])) / sum(count_over_time({series}[15m])) < 0.9"
    assert part[2] == pooled and part[5] == "ERROR" and part[3] == 7
    assert missing[2] == f"absent_over_time({series}[10m])" and missing[5] == "ERROR"
    assert gateway[2] == 'max(probe_success{cluster="c", namespace="ns", job="vllm-api-prober-gateway"}) < 1'
    assert gateway[5] == "CRITICAL" and gateway[3] == 7 and "vllm70b-vip" in gateway[4] and "Lease" in gateway[4]
    gateway_part = alerts["probe-gateway-failing-part"]
    assert gateway_part[2] == pooled.replace('job="vllm-api-prober"', 'job="vllm-api-prober-gateway"') and (
        gateway_part[2].count("prober-gateway") == 2
    )
    assert gateway_part[5] == "ERROR" and "504" in gateway_part[4]
    assert "probe-gateway-failing" not in {a[0] for a in prober.probe_alerts("c", "ns", _vllm_target(), settings)}


def test_prober_probes_through_the_gateway_address_on_every_gateway_stack():
    """The second PodMonitoring scrapes the same exporter with the Gateway's address as its target, on each stack
    with a Gateway and a probe; none elsewhere."""
    for stack in STACKS:
        plan = plan_of(stack)
        gateways = [o for o in kubernetes_objects(plan) if o["kind"] == "Gateway"]
        monitorings = {o["metadata"]["name"]: o for o in kubernetes_objects(plan) if o["kind"] == "PodMonitoring"}
        probed = [n for n in monitorings if n.endswith("-prober")]
        through = [n for n in monitorings if n.endswith("-prober-gateway")]
        if not gateways or not probed:
            assert through == [], stack
            continue
        (service_probe,) = probed
        assert through == [f"{service_probe}-gateway"], stack
        gateway, service = monitorings[through[0]], monitorings[service_probe]
        assert gateway["spec"]["selector"] == service["spec"]["selector"], stack
        (endpoint,) = gateway["spec"]["endpoints"]
        assert endpoint["params"]["module"] == ["completion"], stack
        # the reserved address's IP: known once it is reserved, in `pulumi up` (the existing address's below)
        assert endpoint["params"]["target"] == ["<unknown>"], stack
        assert {k: endpoint[k] for k in ("port", "path", "interval", "timeout")} == {
            k: service["spec"]["endpoints"][0][k] for k in ("port", "path", "interval", "timeout")
        }, stack


def test_prober_through_an_existing_gateway_address_targets_its_ip_and_listener():
    named = {"existingAddress": "platform-vip", "existingAddressIp": "10.1.2.3"}
    plan = plan_edited(VLLM_STACK, gateway=lambda g: g.update(named))
    (monitoring,) = [
        o
        for o in kubernetes_objects(plan)
        if o["kind"] == "PodMonitoring" and o["metadata"]["name"] == "vllm-api-prober-gateway"
    ]
    assert monitoring["spec"]["endpoints"][0]["params"]["target"] == ["http://10.1.2.3:80/v1/completions"]
    (prober_deployment,) = [
        o for o in kubernetes_objects(plan) if o["metadata"]["name"] == "vllm-api-prober" and o["kind"] == "Deployment"
    ]
    assert (
        "through the Gateway's address platform-vip"
        in prober_deployment["metadata"]["annotations"]["tpu-serving.dev/probe"]
    )


def test_prober_alert_settings_reach_the_policies():
    def edit(o: dict) -> None:
        o.update(probeFailingMinutes=3, probeSlowSeconds=20, probeSlowMinutes=30)

    plan = plan_edited(VLLM_STACK, observability=edit)
    policies = {
        r.name.split("-observability-", 1)[-1]: r.inputs for r in plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy")
    }
    failing = policies["probe-failing"]["conditions"][0]["conditionPrometheusQueryLanguage"]
    slow = policies["probe-slow"]["conditions"][0]["conditionPrometheusQueryLanguage"]
    assert (failing["duration"], slow["duration"]) == ("180s", "1800s") and "> 20)" in slow["query"]
    assert policies["probe-failing"]["severity"] == "CRITICAL" and policies["probe-slow"]["severity"] == "WARNING"


def test_prober_slow_threshold_beyond_the_probe_timeout_is_refused():
    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:observability": {**VLLM["tpu-serving:observability"], "probeSlowSeconds": 50}})
    (problem,) = [p for p in err.value.problems if "probeSlowSeconds" in p]
    assert problem.startswith("tpu-serving:observability.probeSlowSeconds = 50")


def test_prober_alerts_saxml_fail_in_part_and_go_missing_and_are_not_slow():
    """The probe-slow threshold is a 1-token completion's; a generation of up to 128 steps on the 175B model is not
    measured here, so Saxml gets the failing, failing-in-part and missing alerts only."""
    alerts = {a[0]: a for a in prober.probe_alerts("c", "ns", _saxml_target(), ObservabilitySettings())}
    assert set(alerts) == {"probe-failing", "probe-failing-part", "probe-missing"}
    failing, part = alerts["probe-failing"], alerts["probe-failing-part"]
    assert failing[5] == "CRITICAL" and part[5] == "ERROR" and alerts["probe-missing"][5] == "ERROR"
    assert failing[2] == 'max(probe_success{cluster="c", namespace="ns", job="sax-http-lb-prober"}) < 1'
    assert "a generation of /sax/test/spmd" in failing[4] and "every 75 s" in failing[4]
    assert "kubectl -n ns logs deploy/sax-http" in failing[4] and "leader pod" not in failing[4]
    assert "sax-http pods" in part[4] and "listcell" in part[4] and "1-token" not in part[4]


def test_prober_saxml_preview_line_says_what_it_sends_and_does_not_cover():
    (line,) = probe_summary(plan_of(SAXML_STACK).resources)
    assert line.startswith('Probe: POST http://sax-http-lb:8888/generate {"model": "/sax/test/spmd"')
    assert "every 75 s" in line and "128 steps" in line and "not through the load balancer" in line


# ------------------------------------------------------------------------- flows


def test_prober_flow_to_its_target_is_checked_and_needs_the_decode_policy():
    data = plan_of(DISAGG_STACK).as_json()
    probe = [
        f
        for f in network.check(PlanView(data)).findings
        if re.search(r"/vllm-api-prober -> .*-decode-leader:8000", f.subject)
    ]
    assert probe and all(f.ok and "vllm-from-namespace" in f.reason for f in probe)
    data["resources"] = [r for r in data["resources"] if not r["name"].endswith("-vllm-from-namespace")]
    denied = [f for f in network.check(PlanView(data)).findings if f.subject in {p.subject for p in probe}]
    assert denied and not any(f.ok for f in denied)


def test_prober_flow_to_sax_http_is_checked_and_needs_the_namespace_policy():
    data = plan_of(SAXML_STACK).as_json()
    probe = [
        f
        for f in network.check(PlanView(data)).findings
        if re.search(r"/sax-http-lb-prober -> .*sax-http:8888", f.subject)
    ]
    assert probe and all(f.ok and "same-namespace" in f.reason for f in probe), [(f.subject, f.reason) for f in probe]
    data["resources"] = [r for r in data["resources"] if not r["name"].endswith("-tenancy-same-namespace")]
    denied = [f for f in network.check(PlanView(data)).findings if f.subject in {p.subject for p in probe}]
    assert denied and not any(f.ok for f in denied)


@pytest.mark.parametrize("stack", ["vllm-llama33-70b-v6e8", "llama31-405b-v6e16", "saxml-175b-v5e32x2"])
def test_prober_alert_pages_say_what_the_probe_goes_through_once(stack):
    """SRE review 30, m2: every probe page read "It goes it goes through the Service"."""
    pages = [
        r.inputs["documentation"]["content"]
        for r in plan_of(stack).of_type("gcp:monitoring/alertPolicy:AlertPolicy")
        if "probe" in r.name
    ]
    assert pages and all(" goes it goes " not in p.lower() for p in pages), pages
    assert any(". It goes through the Service" in p for p in pages), pages
