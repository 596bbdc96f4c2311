"""tpu_serving_tools.conformance.epp: the endpoint picker's flags, image and configuration against its release's table
(make check's engines)."""

from __future__ import annotations

import pytest

from tests.tools.conformance.test_vllm import _view
from tpu_serving_tools.conformance import table
from tpu_serving_tools.runtime.planview import PlanView


def _epp(view: PlanView) -> dict:
    (dep,) = [
        r["inputs"] for r in view.resources if r["inputs"].get("kind") == "Deployment" and "epp" in str(r["inputs"])
    ]
    return dep["spec"]["template"]["spec"]["containers"][0]


def _epp_config(view: PlanView) -> dict:
    (cm,) = [
        r["inputs"]
        for r in view.resources
        if r["inputs"].get("kind") == "ConfigMap" and r["inputs"]["metadata"]["name"].endswith("-epp")
    ]
    return cm["data"]


def test_epp_the_endpoint_picker_passes_only_its_release_flags():
    from tpu_serving.traffic.gateway import EPP_IMAGE
    from tpu_serving_tools.conformance import epp

    assert EPP_IMAGE == epp.EPP_IMAGE  # the library's pin is the release the table describes
    view = _view("vllm-llama33-70b-v5e16")
    (finding,) = epp.findings(view)
    assert finding.ok and "9 flags, each the EPP's; its configuration the v0.10.0 format" in finding.reason
    # gateway-api-inference-extension v1.3.1's EPP had it; llm-d-router v0.10.0 reads metrics per the config file
    _epp(view)["args"].append("--model-server-metrics-port=8000")
    (finding,) = epp.findings(view)
    assert not finding.ok and finding.reason == "--model-server-metrics-port: no such flag in the EPP v0.10.0"
    t = table.load("epp-v0.10.0")
    assert "llm-d/llm-d-router@v0.10.0" in t.source["artefact"] and "pkg/epp/server/options.go" in t.source["artefact"]
    assert {"--zap-encoder", "--v", "--pool-group", "--grpc-health-port"} <= t.flags  # zap, logging and options.go


def test_epp_the_endpoint_picker_image_is_the_release_through_a_mirror_too():
    from tpu_serving_tools.conformance import epp

    mirror = "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-ghcr/llm-d/llm-d-router-endpoint-picker:v0.10.0"
    assert epp.is_release_image(mirror) and epp.is_release_image(mirror + "@sha256:" + "a" * 64)
    assert epp.is_release_image(epp.EPP_IMAGE)
    assert not epp.is_release_image(mirror.replace("v0.10.0", "v0.9.0"))
    assert not epp.is_release_image("ghcr.io/llm-d/other-endpoint-picker:v0.10.0")


def test_epp_the_endpoint_picker_refuses_its_deprecated_metric_flags_and_the_old_image():
    from tpu_serving_tools.conformance import epp

    view = _view("vllm-llama33-70b-v5e16")
    # in the release's flag set, but Options.Validate refuses them when set (options.go deprecatedMetricFlags)
    _epp(view)["args"].append("--total-queued-requests-metric=vllm:num_requests_waiting")
    (finding,) = epp.findings(view)
    assert finding.reason == "--total-queued-requests-metric: refused by the EPP v0.10.0 when set"
    view = _view("vllm-llama33-70b-v5e16")
    _epp(view)["image"] = "registry.k8s.io/gateway-api-inference-extension/epp:v1.3.1"
    (finding,) = epp.findings(view)
    assert not finding.ok and "is not ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0" in finding.reason


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda t: t.replace("llm-d.ai/v1alpha1", "inference.networking.x-k8s.io/v1alpha1"),
            "config apiVersion inference.networking.x-k8s.io/v1alpha1: deprecated in the EPP v0.10.0, "
            "use llm-d.ai/v1alpha1",
        ),
        (
            lambda t: t.replace("type: queue-scorer", "type: queue-depth-scorer"),
            "plugin type queue-depth-scorer: not registered in the EPP v0.10.0",
        ),
        (
            lambda t: t.replace("type: queue-scorer", "type: session-affinity-scorer"),
            "plugin type session-affinity-scorer: alpha, refused without --allow-experimental-plugins",
        ),
        (lambda t: t + "scheduling: {}\n", "config key scheduling: no such key in the EPP v0.10.0"),
    ],
)
def test_epp_the_endpoint_picker_configuration_is_the_release_format(edit, problem):
    from tpu_serving_tools.conformance import epp

    view = _view("vllm-llama33-70b-v5e16")
    data = _epp_config(view)
    data["default-plugins.yaml"] = edit(data["default-plugins.yaml"])
    (finding,) = epp.findings(view)
    assert not finding.ok and finding.reason == problem


def test_epp_the_endpoint_picker_config_file_must_be_mounted():
    from tpu_serving_tools.conformance import epp

    view = _view("vllm-llama33-70b-v5e16")
    data = _epp_config(view)
    data["plugins.yaml"] = data.pop("default-plugins.yaml")
    (finding,) = epp.findings(view)
    assert finding.reason == "config file /config/default-plugins.yaml: no mounted ConfigMap of the plan holds it"
    # an alpha plugin passes with the flag that admits them
    view = _view("vllm-llama33-70b-v5e16")
    data = _epp_config(view)
    data["default-plugins.yaml"] = data["default-plugins.yaml"].replace("queue-scorer", "session-affinity-scorer")
    _epp(view)["args"].append("--allow-experimental-plugins")
    (finding,) = epp.findings(view)
    assert finding.ok, finding.reason
