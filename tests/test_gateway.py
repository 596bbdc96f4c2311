"""Traffic: the internal GKE Gateway, its HTTPRoute, health check, InferencePool and endpoint picker."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import plan_of, resource, waits_for
from tests.fixtures.configs import plan_edited
from tpu_serving_tools import schema
from tpu_serving_tools.offline import kubernetes_objects
from tpu_serving_tools.runtime.network import check as network_check
from tpu_serving_tools.runtime.planview import PlanView

POOLED = "vllm-llama33-70b-v5e16"
PLAIN = "vllm-llama31-405b-v6e16"
JETSTREAM = "llama31-405b-v6e16"


def _objects(plan, kind: str) -> list[dict]:
    return [o for o in kubernetes_objects(plan) if o["kind"] == kind]


def test_gateway_is_an_internal_regional_gateway_with_the_api_on_the_cluster():
    plan = plan_of(PLAIN)
    (gw,) = _objects(plan, "Gateway")
    assert gw["apiVersion"] == "gateway.networking.k8s.io/v1"
    assert gw["spec"] == {
        "gatewayClassName": "gke-l7-rilb",
        "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
    }
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["gatewayApiConfig"] == {"channel": "CHANNEL_STANDARD"}
    without = plan_of("llama2-70b-disagg-v6e8x2")
    assert "gatewayApiConfig" not in without.of_type("gcp:container/cluster:Cluster")[0].inputs


def test_gateway_creates_the_regions_proxy_only_subnet():
    subnet = resource(plan_of(PLAIN), "gcp:compute/subnetwork:Subnetwork", "vllm405b-gateway-proxy-only")
    assert {k: subnet.inputs[k] for k in ("purpose", "role", "ipCidrRange", "region", "network", "name")} == {
        "purpose": "REGIONAL_MANAGED_PROXY",
        "role": "ACTIVE",
        "ipCidrRange": "192.168.2.0/23",
        "region": "us-east5",
        "network": "default",
        "name": "vllm405b-proxy-only",
    }


def test_gateway_routes_to_the_service_with_a_health_check_on_its_health_path():
    plan = plan_of(PLAIN)
    (route,) = _objects(plan, "HTTPRoute")
    assert route["spec"]["parentRefs"] == [{"name": "vllm-api-gateway"}]
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "vllm-api", "port": 8000}]
    (hc,) = _objects(plan, "HealthCheckPolicy")
    assert hc["spec"]["targetRef"] == {"group": "", "kind": "Service", "name": "vllm-api"}
    assert hc["spec"]["default"]["config"] == {
        "type": "HTTP",
        "httpHealthCheck": {"requestPath": "/health", "port": 8000},
    }
    assert not _objects(plan, "InferencePool")


def test_gateway_inference_pool_selects_the_leaders_and_names_its_endpoint_picker():
    plan = plan_of(POOLED)
    (pool,) = _objects(plan, "InferencePool")
    assert pool["spec"] == {
        "selector": {"matchLabels": {"leaderworkerset.sigs.k8s.io/name": "vllm", "role": "leader"}},
        "targetPorts": [{"number": 8000}],
        "endpointPickerRef": {"name": "vllm-api-gateway-epp", "port": {"number": 9002}, "failureMode": "FailClose"},
    }
    (route,) = _objects(plan, "HTTPRoute")
    assert route["spec"]["rules"][0]["backendRefs"] == [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "vllm-api-gateway"}
    ]
    (hc,) = _objects(plan, "HealthCheckPolicy")
    assert hc["spec"]["targetRef"]["kind"] == "InferencePool"
    # GKE serves the InferencePool CRD itself: the stack installs none.
    assert "inference.networking.k8s.io" not in plan.outputs["controllers"]
    assert not [r for r in plan.resources if "inference-pool" in r.name]


def test_gateway_endpoint_picker_runs_as_the_chart_deploys_it():
    plan = plan_of(POOLED)
    (epp,) = [d for d in _objects(plan, "Deployment") if d["metadata"]["name"] == "vllm-api-gateway-epp"]
    (c,) = epp["spec"]["template"]["spec"]["containers"]
    assert c["image"] == "registry.k8s.io/gateway-api-inference-extension/epp:v1.3.1"
    assert c["args"][:4] == ["--pool-name", "vllm-api-gateway", "--pool-namespace", "vllm-llama70b"]
    assert "/config/default-plugins.yaml" in c["args"]
    assert {p["containerPort"] for p in c["ports"]} == {9002, 9003, 9090}
    assert c["readinessProbe"]["grpc"] == {"port": 9003, "service": "inference-extension"}
    (cm,) = [m for m in _objects(plan, "ConfigMap") if m["metadata"]["name"] == "vllm-api-gateway-epp"]
    assert (
        "queue-scorer" in cm["data"]["default-plugins.yaml"]
        and "kv-cache-utilization-scorer" in cm["data"]["default-plugins.yaml"]
    )
    (role,) = [r for r in _objects(plan, "Role") if r["metadata"]["name"] == "vllm-api-gateway-epp"]
    assert {"inferencepools", "pods"} <= {res for rule in role["rules"] for res in rule["resources"]}


def test_gateway_tenancy_admits_the_proxies_and_health_checks_to_the_serving_port():
    (policy,) = [p for p in _objects(plan_of(POOLED), "NetworkPolicy") if p["metadata"]["name"] == "serving-ingress"]
    cidrs = {p["ipBlock"]["cidr"] for rule in policy["spec"]["ingress"] for p in rule["from"] if "ipBlock" in p}
    assert cidrs == {"192.168.0.0/23", "35.191.0.0/16", "130.211.0.0/22"}
    assert policy["spec"]["ingress"][0]["ports"] == [{"protocol": "TCP", "port": 8000}]
    (epp,) = [p for p in _objects(plan_of(POOLED), "NetworkPolicy") if p["metadata"]["name"].endswith("-from-gateway")]
    assert epp["spec"]["ingress"] == [
        {"from": [{"ipBlock": {"cidr": "192.168.0.0/23"}}], "ports": [{"protocol": "TCP", "port": 9002}]},
        # Google's health checkers probe the EPP backend from their own ranges, not the proxy-only subnet.
        {
            "from": [{"ipBlock": {"cidr": "35.191.0.0/16"}}, {"ipBlock": {"cidr": "130.211.0.0/22"}}],
            "ports": [{"protocol": "TCP", "port": 9002}, {"protocol": "TCP", "port": 9003}],
        },
    ]


def test_gateway_inference_pool_enables_the_network_services_api():
    def apis(plan):
        return {r.inputs["service"] for r in plan.of_type("gcp:projects/service:Service")}

    assert "networkservices.googleapis.com" in apis(plan_of(POOLED))
    # A plain Gateway needs no Network Services API; nor does a stack without a gateway.
    assert "networkservices.googleapis.com" not in apis(plan_of(PLAIN))
    assert "networkservices.googleapis.com" not in apis(plan_of("saxml-175b-v5e32x2"))
    # The InferencePool waits for the API (through the deployment's APIs component).
    plan = plan_of(POOLED)
    (api,) = [
        r for r in plan.of_type("gcp:projects/service:Service") if r.inputs["service"].startswith("networkservices")
    ]
    (pool,) = [r for r in plan.resources if r.type == "kubernetes:inference.networking.k8s.io/v1:InferencePool"]
    assert api.urn in waits_for(plan, pool)


def test_gateway_shipped_stacks_create_one_proxy_only_subnet_per_region_and_network():
    """A region and network hold one active proxy-only subnet; two shipped stacks creating one in the
    same project, region and network would make the second `pulumi up` fail."""
    from tests.conftest import STACKS

    creators: dict[tuple[str, str, str], list[str]] = {}
    for stack in STACKS:
        for subnet in plan_of(stack).of_type("gcp:compute/subnetwork:Subnetwork"):
            if subnet.inputs.get("purpose") == "REGIONAL_MANAGED_PROXY":
                key = (subnet.inputs["project"], subnet.inputs["region"], subnet.inputs["network"])
                creators.setdefault(key, []).append(stack)
    assert creators, "no shipped stack creates a proxy-only subnet"
    assert all(len(stacks) == 1 for stacks in creators.values()), creators


def test_gateway_existing_proxy_only_subnet_is_not_created_but_still_known():
    plan = plan_edited(PLAIN, gateway=lambda g: g.update(createProxyOnlySubnet=False))
    assert not plan.of_type("gcp:compute/subnetwork:Subnetwork")
    (gw,) = _objects(plan, "Gateway")
    assert gw["metadata"]["annotations"] == {"tpu-serving.dev/proxy-only-subnet": "192.168.2.0/23"}
    flows = {f.subject: f for f in network_check(PlanView(plan.as_json())).findings}
    assert flows["flow gateway vllm-api-gateway proxies 192.168.2.0/23 -> vllm-llama405b/vllm-leader:8000/TCP"].ok


def test_gateway_jetstream_routes_to_jetstream_http_with_a_health_check_on_healthcheck():
    plan = plan_of(JETSTREAM)
    (gw,) = _objects(plan, "Gateway")
    assert gw["metadata"]["name"] == "jetstream-svc-gateway"
    (route,) = _objects(plan, "HTTPRoute")
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "jetstream-svc", "port": 8000}]
    (hc,) = _objects(plan, "HealthCheckPolicy")
    assert hc["spec"]["targetRef"] == {"group": "", "kind": "Service", "name": "jetstream-svc"}
    # The probe path of the seed's jax-tpu container, answered by the server once it is ready.
    assert hc["spec"]["default"]["config"]["httpHealthCheck"] == {"requestPath": "/healthcheck", "port": 8000}
    (lws,) = _objects(plan, "LeaderWorkerSet")
    (jax,) = [
        c for c in lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"] if c["name"] == "jax-tpu"
    ]
    assert (jax["readinessProbe"]["httpGet"]["path"], jax["readinessProbe"]["httpGet"]["port"]) == (
        "/healthcheck",
        8000,
    )
    assert not _objects(plan, "InferencePool")
    assert plan.outputs["gateway"]["port"] == 80
    releases = plan.outputs["controllers"]
    assert schema.validate_all([gw, route, hc], releases) == []


# --------------------------------------------------------------------------- the runtime model


def _flows(plan_json: dict) -> dict:
    return {f.subject: f for f in network_check(PlanView(plan_json)).findings}


def test_gateway_runtime_evaluates_proxy_health_check_and_picker_flows():
    flows = _flows(plan_of(POOLED).as_json())
    for subject in (
        "flow gateway vllm-api-gateway proxies 192.168.0.0/23 -> vllm-llama70b/vllm-leader:8000/TCP",
        "flow load balancer health checks 35.191.0.0/16 -> vllm-llama70b/vllm-leader:8000/TCP",
        "flow load balancer health checks 130.211.0.0/22 -> vllm-llama70b/vllm-leader:8000/TCP",
        "flow gateway vllm-api-gateway proxies 192.168.0.0/23 -> vllm-llama70b/vllm-api-gateway-epp:9002/TCP",
        "flow vllm-llama70b/vllm-api-gateway-epp -> vllm-llama70b/vllm-leader:8000/TCP",
    ):
        assert flows[subject].ok, (subject, flows[subject].reason)


def test_gateway_runtime_admits_the_proxies_and_health_checks_to_the_jetstream_leaders():
    flows = _flows(plan_of(JETSTREAM).as_json())
    for subject in (
        "flow gateway jetstream-svc-gateway proxies 192.168.2.0/23 -> llama405b/jetstream-pathways-leader:8000/TCP",
        "flow load balancer health checks 35.191.0.0/16 -> llama405b/jetstream-pathways-leader:8000/TCP",
        "flow load balancer health checks 130.211.0.0/22 -> llama405b/jetstream-pathways-leader:8000/TCP",
    ):
        assert flows[subject].ok, (subject, flows[subject].reason)


def _without_peer(plan: dict, policy: str, cidr: str) -> dict:
    plan = copy.deepcopy(plan)
    for r in plan["resources"]:
        if r["inputs"].get("kind") == "NetworkPolicy" and r["inputs"]["metadata"]["name"] == policy:
            rules = r["inputs"]["spec"]["ingress"]
            for rule in rules:
                rule["from"] = [p for p in rule["from"] if p.get("ipBlock", {}).get("cidr") != cidr]
            # A rule left without peers would admit every source: drop it.
            r["inputs"]["spec"]["ingress"] = [rule for rule in rules if rule["from"]]
    return plan


def test_gateway_runtime_denies_the_proxies_without_the_proxy_only_range():
    flows = _flows(_without_peer(plan_of(POOLED).as_json(), "serving-ingress", "192.168.0.0/23"))
    proxies = flows["flow gateway vllm-api-gateway proxies 192.168.0.0/23 -> vllm-llama70b/vllm-leader:8000/TCP"]
    assert not proxies.ok and "serving-ingress" in proxies.reason
    assert flows["flow load balancer health checks 35.191.0.0/16 -> vllm-llama70b/vllm-leader:8000/TCP"].ok


def test_gateway_runtime_denies_the_picker_without_its_policy():
    flows = _flows(_without_peer(plan_of(POOLED).as_json(), "vllm-api-gateway-epp-from-gateway", "192.168.0.0/23"))
    assert not flows[
        "flow gateway vllm-api-gateway proxies 192.168.0.0/23 -> vllm-llama70b/vllm-api-gateway-epp:9002/TCP"
    ].ok


# --------------------------------------------------------------------------- strict schemas


@pytest.mark.parametrize(
    ("kind", "path", "bad"),
    [
        ("HTTPRoute", ("spec", "rules", 0), "backendRef"),
        ("Gateway", ("spec",), "gatewayClass"),
        ("InferencePool", ("spec",), "targetPort"),
        ("HealthCheckPolicy", ("spec", "default", "config", "httpHealthCheck"), "requestpath"),
        ("GCPBackendPolicy", ("spec", "default"), "timeoutSecs"),
    ],
)
def test_gateway_schemas_refuse_misspelt_fields(kind, path, bad, reference):
    plan = plan_of(POOLED)
    (obj,) = _objects(plan, kind)
    releases = plan.outputs["controllers"]
    assert schema.validate_all([obj], releases) == []
    wrong = copy.deepcopy(obj)
    node = wrong
    for key in path:
        node = node[key]
    node[bad] = "x"
    (problem,) = schema.validate_all([wrong], releases)
    assert bad in problem


def test_gateway_backend_policy_lifts_the_30_second_timeout():
    plan = plan_of(POOLED)
    (policy,) = _objects(plan, "GCPBackendPolicy")
    assert policy["spec"]["default"] == {"timeoutSec": 300, "logging": {"enabled": True}}
    (route,) = _objects(plan, "HTTPRoute")
    backend = route["spec"]["rules"][0]["backendRefs"][0]
    assert policy["spec"]["targetRef"]["kind"] == backend.get("kind", "Service")
    assert policy["spec"]["targetRef"]["name"] == backend["name"]
