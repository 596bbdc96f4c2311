"""The stand-in metrics adapter of the e2e run (tools/e2e/metrics_adapter.py): the platform's adapter objects named
as the Stackdriver adapter's release manifest names them (so the stack's HPAs and the aggregated API find it), its
command line and write path; and, marked e2e (it needs the toolchain's test-adapter and a control plane), a value
written for a pod read back through the API server's aggregated custom metrics API."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from tpu_serving.operations.autoscaling import (
    ADAPTER_DEPLOYMENT,
    ADAPTER_NAMESPACE,
    ADAPTER_SERVICE_ACCOUNT,
    METRICS_ADAPTER,
)
from tpu_serving_tools.e2e.metrics_adapter import PORT, STAND_IN, adapter_argv, platform_objects, write_path


def _by_kind(kind: str) -> list[dict]:
    return [o for o in platform_objects() if o["kind"] == kind]


def test_platform_objects_route_the_metrics_apis_to_the_adapters_service():
    names = {o["metadata"]["name"]: o["spec"] for o in _by_kind("APIService")}
    assert set(names) == {
        "v1beta1.custom.metrics.k8s.io",
        "v1beta2.custom.metrics.k8s.io",
        "v1beta1.external.metrics.k8s.io",
    }
    for name, spec in names.items():
        assert name == f"{spec['version']}.{spec['group']}" and spec["insecureSkipTLSVerify"] is True
        assert spec["service"] == {"name": ADAPTER_DEPLOYMENT, "namespace": ADAPTER_NAMESPACE, "port": PORT}
    (service,) = _by_kind("Service")
    (deployment,) = _by_kind("Deployment")
    assert (service["metadata"]["name"], service["metadata"]["namespace"]) == (ADAPTER_DEPLOYMENT, ADAPTER_NAMESPACE)
    assert service["spec"]["ports"] == [{"port": 443, "protocol": "TCP", "targetPort": 443}]
    template = deployment["spec"]["template"]
    assert (
        service["spec"]["selector"] == template["metadata"]["labels"] == deployment["spec"]["selector"]["matchLabels"]
    )
    # the library's availability settings name the same Deployment and selector
    availability = METRICS_ADAPTER.availability
    assert availability is not None and availability.selector == service["spec"]["selector"]
    assert (deployment["metadata"]["name"], deployment["metadata"]["namespace"]) == (
        availability.deployment,
        availability.namespace,
    )
    assert template["spec"]["serviceAccountName"] == ADAPTER_SERVICE_ACCOUNT
    bound = {(b["kind"], b["roleRef"]["name"]) for o in platform_objects() if "roleRef" in o for b in [o]}
    assert bound == {
        ("ClusterRoleBinding", "system:auth-delegator"),
        ("RoleBinding", "extension-apiserver-authentication-reader"),
        ("ClusterRoleBinding", "custom-metrics-resource-reader"),
    }


def test_write_path_escapes_a_managed_prometheus_name():
    path = write_path("ns", "vllm-0", "prometheus.googleapis.com|vllm:num_requests_waiting|gauge")
    assert (
        path
        == "/write-metrics/namespaces/ns/pods/vllm-0/prometheus.googleapis.com%7Cvllm%3Anum_requests_waiting%7Cgauge"
    )
    assert urllib.parse.unquote(path.rsplit("/", 1)[1]) == "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"


def test_adapter_argv_binds_the_pods_stand_in_address():
    argv = adapter_argv(Path("/bin/test-adapter"), "127.30.0.5", Path("/c"), Path("/k"))
    assert argv[0] == "/bin/test-adapter" and "--bind-address=127.30.0.5" in argv and "--secure-port=443" in argv
    assert {a.split("=")[0] for a in argv if "kubeconfig" in a} == {
        "--lister-kubeconfig",
        "--authentication-kubeconfig",
        "--authorization-kubeconfig",
    }
    assert "stand-in" in STAND_IN and "not Managed Prometheus" in STAND_IN


@pytest.mark.e2e
def test_start_adapter_serves_a_written_value_through_the_aggregated_api(tmp_path):
    from tpu_serving_tools.e2e import nodes
    from tpu_serving_tools.e2e.controlplane import ControlPlane, load_toolchain
    from tpu_serving_tools.e2e.metrics_adapter import start_adapter

    tools = load_toolchain()
    if "test-adapter" not in tools:
        pytest.skip("no test-adapter in the e2e toolchain: make e2e-tools")
    metric = "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"
    with ControlPlane(tools=tools) as cp:
        nodes.create_nodes(cp, nodes.Pool("cpu", "n2-standard-8", "us-west4-a"))
        adapter = start_adapter(cp, timeout=120)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "leader", "namespace": "default", "labels": {"role": "leader"}},
               "spec": {"containers": [{"name": "c", "image": "x"}]}}  # fmt: skip
        cp.kube.apply(pod)
        adapter.write("default", "leader", metric, "7")
        quoted = urllib.parse.quote(metric, safe="")
        path = f"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/%2A/{quoted}"
        got = cp.kube.request("GET", path, query="labelSelector=role%3Dleader")
    assert [(i["describedObject"]["name"], i["value"]) for i in got["items"]] == [("leader", "7")], json.dumps(got)


@pytest.mark.e2e
def test_start_adapter_that_cannot_take_the_write_port_leaves_no_apiservice(tmp_path):
    """SRE review round 16, m7: an adapter that could not start left its APIServices registered and unavailable, and
    the stack's namespaces then never finished deleting (NamespaceDeletionDiscoveryFailure)."""
    from tpu_serving_tools.e2e.controlplane import ControlPlane, load_toolchain
    from tpu_serving_tools.e2e.metrics_adapter import APISERVICES, hold_write_port, start_adapter
    from tpu_serving_tools.e2e.processes import ComponentError

    tools = load_toolchain()
    if "test-adapter" not in tools or "kube-apiserver" not in tools:
        pytest.skip("no test-adapter or control plane in the e2e toolchain: make e2e-tools")
    from tpu_serving_tools.e2e import nodes

    with ControlPlane(tools=tools) as cp:
        nodes.create_nodes(cp, nodes.Pool("cpu", "n2-standard-8", "us-west4-a"))  # the adapter's pod gets its IP
        held = hold_write_port(600)  # as another run's adapter holds it
        try:
            with pytest.raises(ComponentError, match="held by another run's adapter"):
                start_adapter(cp, timeout=20, lock_seconds=20)
        finally:
            held.close()
        names = {o["metadata"]["name"] for o in cp.kube.list("apiregistration.k8s.io/v1", "APIService")}
    assert len(APISERVICES) == 3
    assert not {f"{version}.{group}" for group, version, _ in APISERVICES} & names, sorted(names)
    assert "v1.apps" in names  # the list is the aggregator's: a built-in group is there
