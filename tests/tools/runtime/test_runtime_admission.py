"""The runtime model's ``admission`` and ``scope`` categories, and the APIs Kubernetes kinds need."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import STACKS, plan_of
from tpu_serving_tools.runtime import admission, prereqs, scope
from tpu_serving_tools.runtime.planview import PlanView

POOLED = "vllm-llama33-70b-v5e16"


def _view(stack: str) -> PlanView:
    return PlanView(copy.deepcopy(plan_of(stack).as_json()))


def _alert(view: PlanView, suffix: str) -> dict:
    (r,) = [r for r in view.of_type("gcp:monitoring/alertPolicy:AlertPolicy") if r["name"].endswith(suffix)]
    return r


def _failures(view: PlanView) -> dict[str, str]:
    return {f.subject: f.reason for f in admission.check(view).failures()}


@pytest.mark.parametrize("stack", STACKS)
def test_admission_every_gcp_resource_of_every_stack_is_admitted(stack):
    result = admission.check(_view(stack))
    gcp = [r for r in _view(stack).resources if r["custom"] and r["type"].startswith("gcp:")]
    assert result.total == len(gcp) > 0
    assert result.failures() == []


def test_admission_refuses_an_alert_rule_that_is_not_a_label_name():
    view = _view(POOLED)
    alert = _alert(view, "-backlog")
    alert["inputs"]["conditions"][0]["conditionPrometheusQueryLanguage"]["alertRule"] = "not-ready"
    reason = _failures(view)[f"admission AlertPolicy {alert['name']}"]
    assert "alertRule 'not-ready' is not a Prometheus label name" in reason


def test_admission_refuses_a_promql_alert_on_a_metric_a_new_project_lacks():
    view = _view(POOLED)
    alert = _alert(view, "-backlog")
    condition = alert["inputs"]["conditions"][0]["conditionPrometheusQueryLanguage"]
    assert "vllm:num_requests_waiting" in condition["query"]
    condition.pop("disableMetricValidation", None)
    reason = _failures(view)[f"admission AlertPolicy {alert['name']}"]
    assert "reads vllm:num_requests_waiting" in reason and "disableMetricValidation" in reason


def test_admission_promql_metric_names_are_selectors_not_functions_or_labels():
    q = (
        '(avg(kubernetes_io:container_accelerator_duty_cycle{cluster_name="c"}) < 10) and on() '
        '(sum by (pod) (rate(vllm:num_requests_waiting{namespace="n"}[5m])) > 0)'
    )
    assert admission.promql_metrics(q) == {
        "kubernetes_io:container_accelerator_duty_cycle",
        "vllm:num_requests_waiting",
    }
    assert admission.builtin_metric("kubernetes_io:container_accelerator_duty_cycle")
    assert not admission.builtin_metric("vllm:num_requests_waiting")
    assert not admission.builtin_metric("kube_pod_status_ready")


@pytest.mark.parametrize(
    ("type_", "field", "bad", "expect"),
    [
        ("gcp:serviceaccount/account:Account", "accountId", "abc", "is 3 characters"),
        ("gcp:serviceaccount/account:Account", "accountId", "Node-Pool-sa", "does not match"),
        ("gcp:storage/bucket:Bucket", "name", "google-weights", "contains 'google'"),
        ("gcp:storage/bucket:Bucket", "storageClass", "HOT", "the API takes"),
        ("gcp:container/cluster:Cluster", "name", "a" * 41, "is 41 characters"),
        ("gcp:projects/service:Service", "service", "container", "does not match"),
    ],
)
def test_admission_refuses_names_and_enums_the_api_refuses(type_, field, bad, expect):
    view = _view(POOLED)
    r = view.of_type(type_)[0]
    r["inputs"][field] = bad
    assert expect in _failures(view)[f"admission {type_.split(':')[-1]} {r['name']}"]


def test_admission_refuses_a_proxy_only_subnet_below_64_addresses():
    view = _view("llama31-405b-v6e16")
    (subnet,) = view.of_type("gcp:compute/subnetwork:Subnetwork")
    subnet["inputs"]["ipCidrRange"] = "192.168.2.0/27"
    assert "smaller than /26" in _failures(view)[f"admission Subnetwork {subnet['name']}"]


def test_admission_a_resource_type_without_rules_fails():
    view = _view(POOLED)
    r = copy.deepcopy(view.of_type("gcp:storage/bucket:Bucket")[0])
    r["type"], r["name"] = "gcp:compute/firewall:Firewall", "a-firewall"
    view.plan["resources"].append(r)
    assert "no admission rules known" in _failures(view)["admission Firewall a-firewall"]


def test_admission_a_gateway_address_is_internal_with_a_purpose_and_a_compute_name():
    view = _view(POOLED)
    (address,) = view.of_type("gcp:compute/address:Address")
    assert {k: address["inputs"][k] for k in ("addressType", "purpose")} == {
        "addressType": "INTERNAL",
        "purpose": "SHARED_LOADBALANCER_VIP",
    }
    assert f"admission Address {address['name']}" not in _failures(view)
    address["inputs"]["addressType"] = "EXTERNAL"
    address["inputs"]["name"] = "Vllm70b_VIP"
    failed = _failures(view)[f"admission Address {address['name']}"]
    assert "purpose = 'SHARED_LOADBALANCER_VIP' on an address of type 'EXTERNAL'" in failed
    assert "Vllm70b_VIP" in failed


def test_prerequisites_inference_pool_needs_network_services_enabled_and_waited_for():
    view = _view(POOLED)
    pool = next(r for r in view.resources if r["type"] == "kubernetes:inference.networking.k8s.io/v1:InferencePool")
    assert "networkservices.googleapis.com" in prereqs.needed_apis(pool)
    apis = {f.subject: f for f in prereqs.check(view).findings}
    assert apis["api networkservices.googleapis.com"].ok
    # without the API enabled, the check fails naming the InferencePool
    view.plan["resources"][:] = [
        r for r in view.resources if r["inputs"].get("service") != "networkservices.googleapis.com"
    ]
    failed = {f.subject: f.reason for f in prereqs.check(view).failures()}
    assert "vllm70b-gateway-inferencepool" in failed["api networkservices.googleapis.com"]


def test_scope_two_stacks_creating_one_proxy_only_subnet_clash():
    views = [(s, _view(s)) for s in STACKS]
    assert scope.check(views).failures() == []
    # a second stack in us-east5 on `default` that creates its own active proxy-only subnet
    (label, view) = next((s, v) for s, v in views if s == "llama31-405b-v6e16")
    twin = copy.deepcopy(view)
    (subnet,) = twin.of_type("gcp:compute/subnetwork:Subnetwork")
    subnet["inputs"]["name"] = "another-proxy-only"
    subnet["inputs"]["ipCidrRange"] = "192.168.8.0/23"
    result = scope.check([*views, ("another", twin)])
    (failure,) = [f for f in result.failures() if "proxy-only" in f.subject]
    assert "tpu-serving-demo/us-east5/default/REGIONAL_MANAGED_PROXY" in failure.subject
    assert "created by 2 stacks" in failure.reason
    # a BACKUP subnet beside the ACTIVE one is allowed
    subnet["inputs"]["role"] = "BACKUP"
    assert not [f for f in scope.check([*views, ("another", twin)]).failures() if "proxy-only" in f.subject]


def test_admission_refuses_a_node_pool_outside_its_clusters_location():
    """A library program's TpuNodePool given another region than its TpuCluster (new-user review)."""
    view = _view(POOLED)
    pools = view.of_type("gcp:container/nodePool:NodePool")
    assert pools and all(p["propertyDependencies"].get("cluster") for p in pools)
    pools[0]["inputs"]["location"] = "us-central1"
    failures = _failures(view)
    (reason,) = [r for s, r in failures.items() if s.endswith(f" {pools[0]['name']}")]
    assert "location 'us-central1' is not its cluster" in reason and "nodePools/create" in reason
    assert len(failures) == 1


def test_admission_alert_queries_read_only_kube_state_metrics_gke_sends():
    """GKE's managed kube state metrics send a curated set (its documentation's tables); a query on another
    open-source name, such as ``kube_pod_status_ready`` (the not-ready alerts read it once), has no series ever."""
    old = (
        'sum((kube_pod_status_phase{namespace="n", phase=~"Pending|Running"} == 1) unless on(namespace, pod) '
        '(kube_pod_status_ready{namespace="n", condition="true"} == 1)) > 0'
    )
    new = (
        'sum((kube_pod_status_phase{namespace="n", phase=~"Pending|Running"} == 1) unless on(namespace, pod) '
        '(min by (namespace, pod) (kube_pod_container_status_ready{namespace="n"}) == 1)) > 0'
    )

    def problems(query: str) -> list[str]:
        inputs = {"conditions": [{"conditionPrometheusQueryLanguage": {"query": query}}]}
        return list(admission._kube_state_metrics(inputs))

    assert problems(old) == [
        "conditions[0] reads kube_pod_status_ready, which GKE's managed kube state metrics do not send: the query "
        "has no series, ever"
    ]
    assert problems(new) == []


TPU7X = "vllm-llama31-405b-tpu7x16"


def _tpu7x_pool(view: PlanView) -> dict:
    (pool,) = [p for p in view.of_type("gcp:container/nodePool:NodePool") if "placementPolicy" in p["inputs"]]
    return pool


def test_admission_tpu7x_pool_is_placed_by_its_workload_policy():
    """The TPU7x stack's slice pool names its workload policy (a dependency of its placementPolicy input), and both
    are admitted; a compact type, a missing name, or a policy in another region, of another type or topology is not."""
    view = _view(TPU7X)
    pool = _tpu7x_pool(view)
    (policy,) = view.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert view.input_source(pool, "placementPolicy") == [policy]
    assert _failures(view) == {}
    subject = f"admission NodePool {pool['name']}"
    for edit, expect in [
        (lambda: pool["inputs"]["placementPolicy"].pop("policyName"), "names no workload policy"),
        (lambda: pool["inputs"]["placementPolicy"].update(type="COMPACT", policyName=""), "names no workload policy"),
        (lambda: policy["inputs"].update(region="us-east5"), "is in region 'us-east5'"),
        (lambda: policy["inputs"]["workloadPolicy"].update(type="HIGH_AVAILABILITY"), "not HIGH_THROUGHPUT"),
        (lambda: policy["inputs"]["workloadPolicy"].update(acceleratorTopology="2x2x4"), "accelerator topology"),
    ]:
        saved = copy.deepcopy((pool["inputs"], policy["inputs"]))
        edit()
        assert expect in _failures(view)[subject]
        pool["inputs"], policy["inputs"] = saved
    pool["inputs"]["placementPolicy"]["type"] = "COMPACT"  # cluster-toolkit's form: the policy named, COMPACT beside it
    assert _failures(view) == {}


def test_admission_refuses_a_workload_policy_type_the_api_does_not_take():
    view = _view(TPU7X)
    (policy,) = view.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    policy["inputs"]["workloadPolicy"]["type"] = "COMPACT"
    assert (
        "the API takes HIGH_AVAILABILITY, HIGH_THROUGHPUT"
        in _failures(view)[f"admission ResourcePolicy {policy['name']}"]
    )


def test_admission_refuses_a_placement_type_other_than_compact_on_earlier_generations():
    view = _view(POOLED)
    pool = next(p for p in view.of_type("gcp:container/nodePool:NodePool") if "placementPolicy" in p["inputs"])
    pool["inputs"]["placementPolicy"]["type"] = "SPREAD"
    assert "the API takes COMPACT" in _failures(view)[f"admission NodePool {pool['name']}"]


@pytest.mark.parametrize(
    ("version", "refused"),
    [
        ("1.33", True),
        ("1.34.0-gke.2200000", True),
        ("1.34", False),
        ("1.34.0-gke.2201000", False),
        ("1.35", False),
        ("latest", False),
    ],
)
def test_admission_refuses_a_tpu7x_pool_on_a_cluster_pinned_below_its_first_gke_version(version, refused):
    """A library program's TpuCluster pinned to an old GKE beside a TPU7x TpuNodePool (new-user review): the stack
    file's check cannot see it, the model's admission of the pool against its cluster does."""
    view = _view(TPU7X)
    (cluster,) = view.of_type("gcp:container/cluster:Cluster")
    cluster["inputs"]["minMasterVersion"] = version
    pool = _tpu7x_pool(view)
    assert ("below 1.34.0-gke.2201000" in _failures(view).get(f"admission NodePool {pool['name']}", "")) is refused
