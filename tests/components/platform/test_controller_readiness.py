"""``WebhookReadiness``: the LWS install's Deployment gets a readiness probe of its webhook server, so ``pulumi up``
waits for the webhooks, not for a ping (the e2e run with the real LWS manager shows both)."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from tpu_serving.platform.controllers import JOBSET, LWS, PATHWAYS_JOB, WebhookReadiness


def deployment(name: str = "lws-controller-manager") -> dict[str, Any]:
    ping = {"httpGet": {"path": "/readyz", "port": 8081}, "initialDelaySeconds": 5, "periodSeconds": 10}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "lws-system"},
        "spec": {
            "replicas": 2,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "manager", "readinessProbe": ping, "livenessProbe": ping},
                        {"name": "sidecar", "readinessProbe": ping},
                    ]
                }
            },
        },
    }


def readiness() -> WebhookReadiness:
    found = LWS.webhook_readiness
    assert found is not None
    return found


def test_webhook_readiness_path_is_the_last_registered_of_the_release():
    assert readiness().path("v0.10.0") == "/validate-disaggregatedset-x-k8s-io-v1-disaggregatedset"
    assert readiness().path("v0.9.0") == "/validate-disaggregatedset-x-k8s-io-v1-disaggregatedset"
    assert readiness().path("v0.8.0") == "/validate--v1-pod"
    assert readiness().path("v0.4.0") == "/validate--v1-pod"


def test_webhook_readiness_only_lws_needs_it():
    # JobSet's readyz is its webhook server's StartedChecker; PathwaysJob's manifest has no webhook
    assert JOBSET.webhook_readiness is None and PATHWAYS_JOB.webhook_readiness is None


def test_webhook_readiness_deployment_props_probe_the_manager_over_https():
    before = deployment()
    after = readiness().deployment_props(before, "v0.10.0")
    manager, sidecar = after["spec"]["template"]["spec"]["containers"]
    assert manager["readinessProbe"]["httpGet"] == {
        "path": "/validate-disaggregatedset-x-k8s-io-v1-disaggregatedset",
        "port": 9443,
        "scheme": "HTTPS",
    }
    assert manager["livenessProbe"] == before["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]
    assert sidecar == before["spec"]["template"]["spec"]["containers"][1]
    # the input is not changed in place
    assert before["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert after["spec"]["replicas"] == 2 and after["metadata"] == before["metadata"]


def test_webhook_readiness_deployment_props_refuse_a_manifest_without_the_container():
    broken = deployment()
    broken["spec"]["template"]["spec"]["containers"] = [{"name": "other"}]
    with pytest.raises(ValueError, match="no container 'manager'"):
        readiness().deployment_props(broken, "v0.10.0")


def _args(type_: str, props: dict[str, Any]) -> pulumi.ResourceTransformArgs:
    return pulumi.ResourceTransformArgs(False, type_, "x", props, pulumi.ResourceOptions())


def test_webhook_readiness_transform_changes_only_the_controller_deployment():
    transform = readiness().transform("v0.10.0")
    changed = transform(_args("kubernetes:apps/v1:Deployment", deployment()))
    assert changed is not None
    probe = changed.props["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    assert probe["httpGet"]["scheme"] == "HTTPS"
    assert transform(_args("kubernetes:apps/v1:Deployment", deployment("another"))) is None
    assert transform(_args("kubernetes:core/v1:Service", {"metadata": {"name": "lws-controller-manager"}})) is None


def test_webhook_readiness_installed_changes_the_manifest_as_the_transform_does():
    via_transform = readiness().transform("v0.10.0")(_args("kubernetes:apps/v1:Deployment", deployment()))
    assert via_transform is not None
    assert readiness().installed(deployment(), "v0.10.0") == via_transform.props
    service = {"kind": "Service", "metadata": {"name": "lws-controller-manager"}}
    assert readiness().installed(service, "v0.10.0") is service
    assert readiness().installed(deployment("another"), "v0.10.0") == deployment("another")
