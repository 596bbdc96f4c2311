"""Traffic: the internal GKE Gateway, its HTTPRoute, health check, InferencePool and endpoint picker."""

from __future__ import annotations

import copy

import pytest
import yaml

from tests.conftest import plan_of, resource, waits_for
from tests.fixtures.configs import plan_edited
from tpu_serving.config import ConfigError
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.reference import schema
from tpu_serving_tools.runtime.network import check as network_check
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.ports import check as ports_check

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
        "addresses": [{"type": "NamedAddress", "value": "vllm405b-vllm-api-gateway"}],
        "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
    }
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["gatewayApiConfig"] == {"channel": "CHANNEL_STANDARD"}
    without = plan_of("llama2-70b-disagg-v6e8x2")
    assert "gatewayApiConfig" not in without.of_type("gcp:container/cluster:Cluster")[0].inputs


def test_gateway_address_is_reserved_in_the_cluster_subnet_and_named_on_the_gateway():
    """SRE review round 39, B2: a fixed address, so the serving probe can go the clients' path."""
    plan = plan_of(PLAIN)
    (address,) = plan.of_type("gcp:compute/address:Address")
    assert {k: address.inputs[k] for k in ("name", "addressType", "purpose", "region", "subnetwork")} == {
        "name": "vllm405b-vllm-api-gateway",
        "addressType": "INTERNAL",
        "purpose": "SHARED_LOADBALANCER_VIP",
        "region": "us-east5",
        "subnetwork": "default",
    }
    (gw,) = [r for r in plan.resources if r.type == "kubernetes:gateway.networking.k8s.io/v1:Gateway"]
    assert address.urn in gw.dependencies  # the Gateway names it: it must exist first


def test_gateway_existing_address_is_named_not_reserved_and_needs_its_ip():
    named = {"existingAddress": "platform-vip", "existingAddressIp": "10.1.2.3"}
    plan = plan_edited(PLAIN, gateway=lambda g: g.update(named))
    assert plan.of_type("gcp:compute/address:Address") == []
    (gw,) = _objects(plan, "Gateway")
    assert gw["spec"]["addresses"] == [{"type": "NamedAddress", "value": "platform-vip"}]
    with pytest.raises(ConfigError) as refused:
        plan_edited(PLAIN, gateway=lambda g: g.update(existingAddress="platform-vip"))
    assert "existingAddressIp" in str(refused.value) and "give both" in str(refused.value)


def test_gateway_pool_health_check_runs_every_two_seconds_as_the_chart_does():
    """GKE review round 40, m1: the chart checks an InferencePool every 2 s with a 2 s timeout ("faster switch over",
    llm-d-router v0.10.0 gke.yaml l.16-19); a Service behind a plain route keeps GKE's defaults."""
    (pooled,) = _objects(plan_of("vllm-llama33-70b-v5e16"), "HealthCheckPolicy")
    assert (pooled["spec"]["default"]["checkIntervalSec"], pooled["spec"]["default"]["timeoutSec"]) == (2, 2)
    assert pooled["spec"]["targetRef"]["kind"] == "InferencePool"
    (plain,) = _objects(plan_of(PLAIN), "HealthCheckPolicy")
    assert "checkIntervalSec" not in plain["spec"]["default"] and "timeoutSec" not in plain["spec"]["default"]


def test_gateway_epp_ext_proc_port_is_h2c_as_the_chart_declares_it():
    """GKE review round 40, m2: the chart's Service declares appProtocol kubernetes.io/h2c on grpc-ext-proc
    (routerlib _service.yaml l.34, l.59)."""
    (service,) = [
        o
        for o in kubernetes_objects(plan_of("vllm-llama33-70b-v5e16"))
        if o["kind"] == "Service" and o["metadata"]["name"].endswith("-epp")
    ]
    ports = {p["name"]: p for p in service["spec"]["ports"]}
    assert ports["grpc-ext-proc"]["appProtocol"] == "kubernetes.io/h2c"
    assert "appProtocol" not in ports["http-metrics"]


def test_gateway_creates_the_regions_proxy_only_subnet():
    # us-east5's is made by llama31-405b-v6e16, beside the region's Cloud NAT; vllm-llama31-405b-v6e16 uses it
    assert plan_of(PLAIN).of_type("gcp:compute/subnetwork:Subnetwork") == []
    subnet = resource(
        plan_of("llama31-405b-v6e16"), "gcp:compute/subnetwork:Subnetwork", "llama405b-gateway-proxy-only"
    )
    assert {k: subnet.inputs[k] for k in ("purpose", "role", "ipCidrRange", "region", "network", "name")} == {
        "purpose": "REGIONAL_MANAGED_PROXY",
        "role": "ACTIVE",
        "ipCidrRange": "192.168.2.0/23",
        "region": "us-east5",
        "network": "default",
        "name": "llama405b-proxy-only",
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
        "endpointPickerRef": {"name": "vllm-api-gateway-epp", "port": {"number": 9002}, "failureMode": "FailOpen"},
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
    """llm-d/llm-d-router v0.10.0's chart (config/charts/routerlib/templates/_deployment.yaml, _config.yaml and
    the llm-d-router-gateway chart's rbac.yaml)."""
    plan = plan_of(POOLED)
    (epp,) = [d for d in _objects(plan, "Deployment") if d["metadata"]["name"] == "vllm-api-gateway-epp"]
    (c,) = epp["spec"]["template"]["spec"]["containers"]
    # the release's image, through the stack's ghcr.io remote repository (imageMirror)
    assert (
        c["image"] == "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-ghcr/llm-d/llm-d-router-endpoint-picker:v0.10.0"
    )
    assert c["args"] == [
        "--pool-name",
        "vllm-api-gateway",
        "--pool-namespace",
        "vllm-llama70b",
        "--pool-group",
        "inference.networking.k8s.io",
        "--zap-encoder",
        "json",
        "--config-file",
        "/config/default-plugins.yaml",
        "--grpc-health-port",
        "9003",
        "--tracing=false",
        "--metrics-endpoint-auth=false",
        "--ha-enable-leader-election",
    ]
    assert {p["containerPort"] for p in c["ports"]} == {9002, 9003, 9090}
    # under leader election the chart's probes ask the liveness service, which every running replica passes
    assert c["readinessProbe"]["grpc"] == {"port": 9003, "service": "liveness"}
    (cm,) = [m for m in _objects(plan, "ConfigMap") if m["metadata"]["name"] == "vllm-api-gateway-epp"]
    config = yaml.safe_load(cm["data"]["default-plugins.yaml"])
    # the current API group: inference.networking.x-k8s.io/v1alpha1 still loads, but is deprecated
    assert (config["apiVersion"], config["kind"]) == ("llm-d.ai/v1alpha1", "EndpointPickerConfig")
    assert [p["type"] for p in config["plugins"]] == [
        "queue-scorer",
        "kv-cache-utilization-scorer",
        "prefix-cache-scorer",
        "metrics-data-source",
        "core-metrics-extractor",
    ]
    (role,) = [r for r in _objects(plan, "Role") if r["metadata"]["name"] == "vllm-api-gateway-epp"]
    assert [(rule["apiGroups"], rule["resources"]) for rule in role["rules"]] == [
        (["inference.networking.x-k8s.io"], ["inferenceobjectives", "inferencemodelrewrites"]),
        (["llm-d.ai"], ["inferenceobjectives", "inferencemodelrewrites"]),
        (["inference.networking.k8s.io"], ["inferencepools"]),
        ([""], ["pods"]),
        # leader election's Lease and events (_leader-election-rbac.yaml l.2-17)
        (["coordination.k8s.io"], ["leases"]),
        ([""], ["events"]),
    ]
    assert all(rule["verbs"] == ["get", "watch", "list"] for rule in role["rules"][:4])
    (svc,) = [s for s in _objects(plan, "Service") if s["metadata"]["name"] == "vllm-api-gateway-epp"]
    assert [(p["name"], p["port"]) for p in svc["spec"]["ports"]] == [("grpc-ext-proc", 9002), ("http-metrics", 9090)]
    # the picker watches its pool and pods through the API: its token is mounted
    assert epp["spec"]["template"]["spec"]["automountServiceAccountToken"] is True


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


def test_gateway_jetstream_routes_to_jetstream_http_with_a_health_check_on_healthcheck(reference):
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
        # GKE health-checks the picker on gRPC 9003 (llm-d-router v0.10.0 llm-d-router-gateway chart, gke.yaml)
        "flow load balancer health checks 35.191.0.0/16 -> vllm-llama70b/vllm-api-gateway-epp:9003/TCP",
        "flow load balancer health checks 130.211.0.0/22 -> vllm-llama70b/vllm-api-gateway-epp:9003/TCP",
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


def test_gateway_runtime_health_checks_of_the_picker_follow_a_health_check_policy_on_its_service():
    plan = copy.deepcopy(plan_of(POOLED).as_json())
    (hc,) = [r for r in plan["resources"] if r["inputs"].get("kind") == "HealthCheckPolicy"]
    policy = copy.deepcopy(hc)
    policy["urn"] += "-epp"
    policy["inputs"]["metadata"]["name"] = "vllm-api-gateway-epp"
    policy["inputs"]["spec"] = {
        "targetRef": {"group": "", "kind": "Service", "name": "vllm-api-gateway-epp"},
        "default": {
            "config": {"type": "GRPC", "grpcHealthCheck": {"portSpecification": "USE_FIXED_PORT", "port": 9002}}
        },
    }
    plan["resources"].append(policy)
    flows = _flows(plan)
    assert flows["flow load balancer health checks 35.191.0.0/16 -> vllm-llama70b/vllm-api-gateway-epp:9002/TCP"].ok
    assert "flow load balancer health checks 35.191.0.0/16 -> vllm-llama70b/vllm-api-gateway-epp:9003/TCP" not in flows
    # ... where the picker serves no gRPC health: the ports category says so
    failed = {f.subject: f.reason for f in ports_check(PlanView(plan)).failures()}
    assert failed == {
        "ports picker vllm-llama70b/vllm-api-gateway health check 9002": "epp serves gRPC health on 9003 "
        "(--grpc-health-port); GKE health-checks 9002 (HealthCheckPolicy vllm-api-gateway-epp)"
    }


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
    assert policy["spec"]["default"] == {
        "timeoutSec": 300,
        "connectionDraining": {"drainingTimeoutSec": 300},
        "logging": {"enabled": True},
    }
    (route,) = _objects(plan, "HTTPRoute")
    backend = route["spec"]["rules"][0]["backendRefs"][0]
    assert policy["spec"]["targetRef"]["kind"] == backend.get("kind", "Service")
    assert policy["spec"]["targetRef"]["name"] == backend["name"]


def test_gateway_backend_policy_drains_a_removed_endpoint_for_the_request_timeout():
    """Connection draining was 0 s, so the load balancer cut a leaving pod's streams (SRE review M1, GKE G4)."""
    for stack in (POOLED, PLAIN, JETSTREAM, "vllm-llama33-70b-disagg-v6e8x2", "vllm-llama33-70b-existing"):
        (policy,) = _objects(plan_of(stack), "GCPBackendPolicy")
        default = policy["spec"]["default"]
        assert default["connectionDraining"] == {"drainingTimeoutSec": default["timeoutSec"]}, stack
    plan = plan_edited(PLAIN, gateway=lambda g: g.update(requestTimeoutSeconds=3600))
    (policy,) = _objects(plan, "GCPBackendPolicy")
    assert policy["spec"]["default"]["connectionDraining"] == {"drainingTimeoutSec": 3600}


def test_gateway_request_timeout_keeps_to_the_connection_draining_bound(reference):
    """drainingTimeoutSec takes 0 to 3600 (GKE's GCPBackendPolicy schema): a longer request timeout is refused at its
    key, with the value and the bound."""
    import json

    from tpu_serving.traffic.gateway_settings import CONNECTION_DRAINING_MAX_SECONDS

    with open(reference / "crds" / "gke-networking-gcpbackendpolicy-v1.schema.json") as f:
        crd = json.load(f)
    draining = crd["properties"]["spec"]["properties"]["default"]["properties"]["connectionDraining"]
    assert draining["properties"]["drainingTimeoutSec"]["maximum"] == CONNECTION_DRAINING_MAX_SECONDS
    with pytest.raises(Exception) as refused:
        plan_edited(PLAIN, gateway=lambda g: g.update(requestTimeoutSeconds=3601))
    message = str(refused.value)
    assert "tpu-serving:gateway.requestTimeoutSeconds" in message and "3601" in message
    assert "must be from 1 to 3600" in message


def test_router_summary_says_how_a_router_restart_behaves_on_each_stack():
    """The preview's Router restart: line, for a plain gateway, a pool of equal leaders and a prefill/decode pool."""
    from tpu_serving_tools.preview.stack import router_summary, summary

    plain, pooled, pd = (router_summary(plan_of(s).outputs) for s in (PLAIN, POOLED, "vllm-llama33-70b-disagg-v6e8x2"))
    assert plain == [plain[0]] and "no endpoint picker" in plain[0]
    assert pooled[0].startswith("Router restart: 2 endpoint picker replicas with leader election, on different nodes")
    assert "failureMode FailOpen" in pooled[0] and "--allow-experimental-plugins" not in pooled[0]
    # GKE review m4 (round 37): an ungraceful loss of the leader holds the Lease up to controller-runtime's 15 s
    assert all("holds it up to 15 s" in line for line in (pooled[0], pd[0]))
    assert "FailClose" in pd[0] and "leader election" in pd[0] and "--allow-experimental-plugins" in pd[0]
    assert pd[0] in summary(plan_of("vllm-llama33-70b-disagg-v6e8x2")).splitlines()
    assert router_summary(plan_of("saxml-175b-v5e32x2").outputs) == []


def _epp(stack: str) -> tuple[dict, dict]:
    plan = plan_of(stack)
    (deployment,) = [d for d in _objects(plan, "Deployment") if d["metadata"]["name"].endswith("-epp")]
    (cm,) = [m for m in _objects(plan, "ConfigMap") if m["metadata"]["name"] == deployment["metadata"]["name"]]
    return deployment, cm


def test_gateway_endpoint_picker_template_carries_the_checksum_of_its_config():
    """SRE review m1: the ConfigMap keeps its name, so only a changed pod template rolls a new configuration out."""
    import hashlib
    import json

    checksums = set()
    for stack in (POOLED, "vllm-llama33-70b-disagg-v6e8x2"):
        deployment, cm = _epp(stack)
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        expected = hashlib.sha256(json.dumps(cm["data"], sort_keys=True).encode()).hexdigest()
        assert annotations["tpu-serving.dev/config-checksum"] == expected
        checksums.add(expected)
    assert len(checksums) == 2  # a different configuration, a different template


@pytest.mark.parametrize("stack", [POOLED, "vllm-llama33-70b-disagg-v6e8x2"])
def test_gateway_endpoint_picker_replicas_are_required_on_different_nodes(stack):
    """SRE reviews B3/M6 and (of a fail-open pool) minor 1: two pickers, leader and standby, never on one VM, rolled one
    new pod first and evicted one at a time; a lone picker's node loss left a fail-open pool unpicked for minutes."""
    deployment, _ = _epp(stack)
    spec = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    (pdb,) = [
        b
        for b in _objects(plan_of(stack), "PodDisruptionBudget")
        if b["spec"]["selector"] == deployment["spec"]["selector"]
    ]
    assert pdb["spec"]["maxUnavailable"] == 1
    assert spec["affinity"] == {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": deployment["spec"]["selector"]["matchLabels"]},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }


@pytest.mark.parametrize("stack", [POOLED, "vllm-llama33-70b-disagg-v6e8x2"])
def test_gateway_endpoint_picker_is_scraped_and_alerted_on(stack):
    """SRE review B3/M7: a PodMonitoring of the picker's metrics port, open to the collectors only, and two alerts."""
    plan = plan_of(stack)
    deployment, _ = _epp(stack)
    name = deployment["metadata"]["name"]
    (c,) = deployment["spec"]["template"]["spec"]["containers"]
    assert "--metrics-endpoint-auth=false" in c["args"]
    metrics_port = next(p["containerPort"] for p in c["ports"] if p["name"] == "metrics")
    (monitoring,) = [m for m in _objects(plan, "PodMonitoring") if m["metadata"]["name"] == name]
    assert monitoring["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert [e["port"] for e in monitoring["spec"]["endpoints"]] == [metrics_port]
    (scrape,) = [p for p in _objects(plan, "NetworkPolicy") if p["metadata"]["name"] == f"scrape-{name}"]
    assert scrape["spec"]["podSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert scrape["spec"]["ingress"][0]["ports"] == [{"protocol": "TCP", "port": metrics_port}]
    policies = {
        r.name.rsplit("-observability-", 1)[1]: r.inputs
        for r in plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy")
        if "-observability-router-" in r.name
    }
    assert sorted(policies) == ["router-errors", "router-not-ready"]
    errors = policies["router-errors"]["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    assert 'llm_d_epp_request_error_total{cluster="' in errors and f'job="{name}"' in errors
    not_ready = policies["router-not-ready"]["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    assert "kube_pod_container_status_ready" in not_ready and f'pod=~"{name}-[a-z0-9]+-[a-z0-9]+"' in not_ready


def test_gateway_without_an_inference_pool_has_no_router_alerts():
    from tpu_serving.operations.observability_roles import router_alerts

    assert router_alerts("c", "ns", None, 5, "kube_pod_container_status_ready") == []
    plan = plan_of(PLAIN)
    assert not [r for r in plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy") if "-router-" in r.name]


def test_router_alerts_page_critical_for_a_fail_close_pool_and_error_for_fail_open():
    from tpu_serving.operations.observability_roles import router_alerts
    from tpu_serving.traffic.gateway import failure_mode

    severity = {
        closed: router_alerts("c", "ns", "svc-gateway-epp", 5, "kube_pod_container_status_ready", closed)[0][5]
        for closed in (True, False)
    }
    assert severity == {True: "CRITICAL", False: "ERROR"}
    assert (failure_mode(True), failure_mode(False)) == ("FailClose", "FailOpen")
    plans = {stack: plan_of(stack) for stack in ("vllm-llama33-70b-v5e16", "vllm-llama33-70b-disagg-v6e8x2")}
    seen = {
        stack: [
            r.inputs["severity"]
            for r in plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy")
            if r.name.endswith("-router-not-ready")
        ]
        for stack, plan in plans.items()
    }
    assert seen == {"vllm-llama33-70b-v5e16": ["ERROR"], "vllm-llama33-70b-disagg-v6e8x2": ["CRITICAL"]}


def test_gateway_url_map_name_over_63_characters_is_refused_with_both_keys():
    """GKE review round 68, m1: the Gateway alerts match the URL map ``gkegw1-<4>-<namespace>-<gateway>-<12>`` by its
    whole name, and GKE cuts a Compute Engine name to 63 characters: the production example under the namespace
    ``llama-3-3-70b-instruct-production`` previewed with both alerts reading nothing. Now its stack is refused,
    naming the namespace and the Service, and so are the component's arguments; 37 characters together fit."""
    from tpu_serving.common.naming import gateway_url_map_problem

    long_namespace = "llama-3-3-70b-instruct-production"
    with pytest.raises(ConfigError) as refused:
        plan_edited("vllm-llama33-70b-v6e8", workloadIdentity=lambda w: w.update(namespace=long_namespace))
    (problem,) = [p for p in refused.value.problems if "URL map" in p]
    assert problem.startswith(
        f"tpu-serving:gateway: GKE names the Gateway's URL map gkegw1-<4>-{long_namespace}-vllm-api-gateway-<12>, "
        "75 characters; it cuts names to 63"
    )
    assert 'workloadIdentity.namespace "llama-3-3-70b-instruct-production"' in problem and "serviceName" in problem
    assert gateway_url_map_problem("n" * 20, "g" * 17) == "" and gateway_url_map_problem("n" * 20, "g" * 18)
