"""tpu_serving_tools.preview.security_notes: what the preview says of a stack's security opt-outs (the control plane's
reach) and of its images pinned by tag only."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tests.fixtures.configs import plan_edited
from tpu_serving_policy.rules import pod_specs
from tpu_serving_tools.preview.security_notes import cluster_notes, security_summary, tag_only_images

DNS_REACH = (
    "pulumi up and kubectl reach the control plane at its DNS-based endpoint, each call authorised by IAM (the caller "
    "needs container.clusters.connect, and gke-gcloud-auth-plugin); it has no external IP endpoint"
)


def _opted_out(cluster: dict) -> None:
    cluster["controlPlaneEndpoint"] = "ip"
    cluster["publicControlPlane"] = True


def _authorized(cluster: dict) -> None:
    cluster["controlPlaneEndpoint"] = "ip"
    cluster["masterAuthorizedNetworks"] = ["203.0.113.0/24"]


def test_security_notes_security_preview_names_the_opt_outs_and_the_tag_only_images():
    sax = plan_edited("saxml-175b-v5e32x2", cluster=_opted_out).resources
    assert cluster_notes(sax) == [
        "cluster saxml175b: pulumi up and kubectl reach the control plane at its external IP endpoint, from any "
        "source address (controlPlaneEndpoint: ip, the opt-out from the DNS-based endpoint)",
        "cluster saxml175b: control plane open to any source address (opt-out: publicControlPlane)",
    ]
    assert cluster_notes(plan_edited("saxml-175b-v5e32x2", cluster=_authorized).resources) == [
        "cluster saxml175b: pulumi up and kubectl reach the control plane at its external IP endpoint, from "
        "203.0.113.0/24 (controlPlaneEndpoint: ip, the opt-out from the DNS-based endpoint)"
    ]
    assert "us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:v1.0.0" in tag_only_images(sax)
    assert cluster_notes(plan_of("vllm-llama33-70b-v5e16").resources) == [f"cluster vllm70b: {DNS_REACH}"]
    lines = security_summary(plan_of("vllm-llama33-70b-v5e16").resources)
    assert lines == [
        f"cluster vllm70b: {DNS_REACH}",
        "images pinned by tag only, no digest (4): gcr.io/distroless/python3-debian13:nonroot, "
        "quay.io/prometheus/blackbox-exporter:v0.28.0, "
        "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-dockerhub/vllm/vllm-tpu:v0.29.0, "
        "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-ghcr/llm-d/llm-d-router-endpoint-picker:v0.10.0; "
        "a tag moved upstream does not reach a node that already "
        "holds the image (imagePullPolicy IfNotPresent), but a new or recreated node pulls the moved tag, so groups "
        "can run different builds: pin a digest",
    ]


def test_security_notes_security_a_digest_pinned_image_is_not_listed():
    resources = copy.deepcopy(plan_of("vllm-llama33-70b-v5e16").resources)
    lws = next(r for r in resources if r.inputs.get("kind") == "LeaderWorkerSet")
    digest = "docker.io/vllm/vllm-tpu:v0.29.0@sha256:" + "a" * 64
    for pod in pod_specs(lws.inputs):
        for c in [*pod["containers"], *(pod.get("initContainers") or [])]:  # the leader's weights wait too
            c["image"] = digest
    assert tag_only_images(resources) == [
        "gcr.io/distroless/python3-debian13:nonroot",  # the host-maintenance gate's
        "quay.io/prometheus/blackbox-exporter:v0.28.0",
        "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-ghcr/llm-d/llm-d-router-endpoint-picker:v0.10.0",
    ]
