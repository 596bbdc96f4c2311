"""The project's program (``__main__.py``) on bad input, table-driven, across every backend: each case runs the
program and is rejected before any resource is registered, naming the key path, without a traceback."""

from __future__ import annotations

import contextvars
import copy

import pulumi
import pytest
from pulumi.runtime import mocks, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from tests.conftest import ROOT
from tests.fixtures.bad_input import BAD, SERVING_BAD
from tests.fixtures.configs import (
    PATHWAYS_JOB,
    SAX_CONFIG,
    SERVING,
    SERVING_AUTOSCALED,
    VLLM,
    as_engine_config,
    with_change,
    with_serving,
)
from tpu_serving.config import ConfigError
from tpu_serving_tools.preview.offline import PreviewMocks, RecordingMonitor, main_program
from tpu_serving_tools.preview.stack_files import load_project


def _serving(base: dict, **changes) -> dict:
    cfg = copy.deepcopy(base)
    cfg["tpu-serving:serving"].update(changes)
    return cfg


CASES: list[tuple[str, str, dict, str]] = (
    # (id, backend, stack config, key path of the expected problem)
    [(f"infra-{c[0]}", "infrastructure", with_change(c[1], c[2]), c[3]) for c in BAD]
    + [(f"pathways-{c[0]}", "jetstream-pathways", with_change(c[1], c[2], SERVING), c[3]) for c in SERVING_BAD]
    + [
        ("saxml-model-too-big", "saxml", SAX_CONFIG, "tpu-serving:serving.models[0]"),
        (
            "saxml-public-without-ranges",
            "saxml",
            _serving(SAX_CONFIG, http={"exposure": "public"}),
            "tpu-serving:serving.http",
        ),
        (
            "saxml-bad-cidr",
            "saxml",
            _serving(SAX_CONFIG, http={"exposure": "public", "sourceRanges": ["300.1.2.0/24"]}),
            "tpu-serving:serving.http.sourceRanges[0]",
        ),
        ("saxml-bad-cell", "saxml", _serving(SAX_CONFIG, cell="sax/test"), "tpu-serving:serving.cell"),
        (
            "saxml-jobset-too-old",
            "saxml",
            _serving(SAX_CONFIG, jobsetVersion="v0.2.0"),
            "tpu-serving:serving.jobsetVersion",
        ),
        ("saxml-misspelt-key", "saxml", _serving(SAX_CONFIG, maxRestart=3), "tpu-serving:serving.maxRestart"),
        (
            "pathways-job-machine-type-not-in-crd",
            "pathways-job",
            {**PATHWAYS_JOB, "tpu-serving:tpuSlices": [{"name": "s", "slice": "v6e-1"}]},
            "tpu-serving:serving.slices",
        ),
        (
            "pathways-job-batch-without-container",
            "pathways-job",
            with_serving(workload="batch"),
            "tpu-serving:serving.container",
        ),
        (
            "pathways-job-jobset-too-old",
            "pathways-job",
            with_serving(jobsetVersion="v0.7.0"),
            "tpu-serving:serving.jobsetVersion",
        ),
        (
            "pathways-job-wrong-type",
            "pathways-job",
            with_serving(maxRestarts="many"),
            "tpu-serving:serving.maxRestarts",
        ),
        ("pathways-job-name-too-long", "pathways-job", with_serving(name="p" * 64), "tpu-serving:serving.name"),
        (
            "pathways-job-head-pool-too-small",
            "pathways-job",
            with_serving(headPool={"machineType": "n2-standard-8"}),
            "tpu-serving:serving.headPool.machineType",
        ),
        (
            "pathways-job-interactive-colocated-head",
            "pathways-job",
            with_serving(deploymentMode="colocate_head_with_workers"),
            "tpu-serving:serving.deploymentMode",
        ),
        (
            "saxml-model-server-image-malformed",
            "saxml",
            _serving(SAX_CONFIG, images={"modelServer": "sax model server"}),
            "tpu-serving:serving.images.modelServer",
        ),
        (
            "vllm-tensor-parallelism-mismatch",
            "vllm",
            with_serving(VLLM, engine={"tensorParallelSize": 8}),
            "tpu-serving:serving.engine.tensorParallelSize",
        ),
        (
            "vllm-model-too-big-for-the-slice",
            "vllm",
            with_serving(VLLM, servedModelName="meta-llama/Llama-3.1-405B-Instruct"),
            "tpu-serving:serving.servedModelName",
        ),
        (
            "vllm-unknown-model-needs-its-size",
            "vllm",
            with_serving(VLLM, servedModelName="acme/house-model"),
            "tpu-serving:serving.modelSize",
        ),
        (
            "vllm-declared-size-too-big",
            "vllm",
            with_serving(VLLM, modelSize={"parametersBillions": 300, "precision": "bf16"}),
            "tpu-serving:serving.modelSize",
        ),
        (
            "vllm-extra-arg-not-a-flag",
            "vllm",
            with_serving(VLLM, engine={"extraArgs": ["enable-prefix-caching"]}),
            "tpu-serving:serving.engine.extraArgs",
        ),
        (
            "vllm-extra-arg-owned-by-the-library",
            "vllm",
            with_serving(VLLM, engine={"extraArgs": ["--tensor-parallel-size=4"]}),
            "tpu-serving:serving.engine.extraArgs",
        ),
        (
            "vllm-token-as-a-value",
            "vllm",
            with_serving(VLLM, loader="hugging-face", hfToken="hf_abc"),
            "tpu-serving:serving.hfToken",
        ),
        (
            "vllm-token-secret-without-hub-loader",
            "vllm",
            with_serving(VLLM, hfTokenSecret={"name": "hf"}),
            "tpu-serving:serving.hfTokenSecret",
        ),
        (
            "vllm-memory-utilization-out-of-bounds",
            "vllm",
            with_serving(VLLM, engine={"memoryUtilization": 1.5}),
            "tpu-serving:serving.engine.memoryUtilization",
        ),
        (
            "vllm-replicas-beyond-the-slices",
            "vllm",
            with_serving(VLLM, replicas=2),
            "tpu-serving:serving.replicas",
        ),
        (
            "vllm-autoscaling-max-beyond-the-slices",
            "vllm",
            with_serving(VLLM, autoscaling={"maxReplicas": 3}),
            "tpu-serving:serving.autoscaling.maxReplicas",
        ),
        (
            "vllm-autoscaling-max-below-the-slices",
            "vllm",
            with_change("tpu-serving:tpuSlices/0/count", 3, with_serving(VLLM, autoscaling={"maxReplicas": 2})),
            "tpu-serving:serving.autoscaling.maxReplicas",
        ),
        (
            "vllm-autoscaling-min-above-max",
            "vllm",
            with_serving(VLLM, autoscaling={"minReplicas": 2, "maxReplicas": 1}),
            "tpu-serving:serving.autoscaling",
        ),
        (
            "vllm-autoscaling-and-fixed-replicas",
            "vllm",
            with_serving(VLLM, replicas=1, autoscaling={"maxReplicas": 1}),
            "tpu-serving:serving.replicas",
        ),
        (
            "vllm-autoscaling-without-managed-prometheus",
            "vllm",
            with_change(
                "tpu-serving:cluster",
                {"name": "vllm", "managedPrometheus": False},
                with_serving(VLLM, autoscaling={"maxReplicas": 1}),
            ),
            "tpu-serving:serving.autoscaling",
        ),
        (
            "vllm-autoscaling-metric-not-a-prometheus-name",
            "vllm",
            with_serving(VLLM, autoscaling={"maxReplicas": 1, "metric": "num requests"}),
            "tpu-serving:serving.autoscaling.metric",
        ),
        (
            "vllm-autoscaling-target-not-positive",
            "vllm",
            with_serving(VLLM, autoscaling={"maxReplicas": 1, "target": 0}),
            "tpu-serving:serving.autoscaling.target",
        ),
        (
            "vllm-slice-zone-outside-the-region",
            "vllm",
            with_change("tpu-serving:tpuSlices/0/zone", "us-east5-b", VLLM),
            "tpu-serving:tpuSlices[0].zone",
        ),
        (
            "vllm-slice-zone-malformed",
            "vllm",
            with_change("tpu-serving:tpuSlices/0/zone", "us-west4", VLLM),
            "tpu-serving:tpuSlices[0].zone",
        ),
        (
            "vllm-file-cache-larger-than-the-boot-disk",
            "vllm",
            with_change("tpu-serving:tpuSlices/0/diskSizeGb", 150, VLLM),
            "tpu-serving:tpuSlices[0].diskSizeGb",
        ),
        (
            "vllm-image-latest",
            "vllm",
            with_serving(VLLM, images={"vllm": "vllm/vllm-tpu:latest"}),
            "tpu-serving:serving.images.vllm",
        ),
        (
            "vllm-image-cache-disk-without-image-streaming",
            "vllm",
            with_change(
                "tpu-serving:cluster",
                {"name": "vllm", "imageStreaming": False},
                with_change("tpu-serving:tpuSlices/0/imageCacheDisk", "global/images/vllm-tpu-cache", VLLM),
            ),
            "tpu-serving:tpuSlices[0].imageCacheDisk",
        ),
        (
            "vllm-image-cache-disk-not-an-image-path",
            "vllm",
            with_change("tpu-serving:tpuSlices/0/imageCacheDisk", "vllm-tpu-cache", VLLM),
            "tpu-serving:tpuSlices[0].imageCacheDisk",
        ),
        (
            "jetstream-autoscaling-group-over-two-slices",
            "jetstream-pathways",
            _serving(SERVING_AUTOSCALED, autoscaling={"maxReplicas": 1}),
            "tpu-serving:serving.autoscaling",
        ),
        (
            "jetstream-autoscaling-disaggregated",
            "jetstream-pathways",
            _serving(SERVING_AUTOSCALED, mode="disaggregated"),
            "tpu-serving:serving.autoscaling",
        ),
        (
            "jetstream-autoscaling-without-metrics",
            "jetstream-pathways",
            with_change("tpu-serving:serving/maxtext/prometheusPort", None, SERVING_AUTOSCALED),
            "tpu-serving:serving.autoscaling",
        ),
        (
            "jetstream-autoscaling-max-beyond-the-slices",
            "jetstream-pathways",
            _serving(SERVING_AUTOSCALED, autoscaling={"maxReplicas": 3}),
            "tpu-serving:serving.autoscaling.maxReplicas",
        ),
        (
            "jetstream-autoscaling-and-fixed-replicas",
            "jetstream-pathways",
            _serving(SERVING_AUTOSCALED, replicas=2),
            "tpu-serving:serving.replicas",
        ),
        (
            "jetstream-autoscaling-without-observability",
            "jetstream-pathways",
            {**SERVING_AUTOSCALED, "tpu-serving:observability": {"enabled": False}},
            "tpu-serving:serving.autoscaling",
        ),
        (
            "gateway-in-front-of-a-backend-it-cannot-route",
            "saxml",
            {**SAX_CONFIG, "tpu-serving:gateway": {}},
            "tpu-serving:gateway",
        ),
        (
            "gateway-inference-pool-in-front-of-jetstream",
            "jetstream-pathways",
            {**SERVING, "tpu-serving:gateway": {"inferencePool": True}},
            "tpu-serving:gateway.inferencePool",
        ),
        (
            "gateway-proxy-only-range-not-a-cidr",
            "vllm",
            {**VLLM, "tpu-serving:gateway": {"proxyOnlyCidr": "192.168.0.0/33"}},
            "tpu-serving:gateway.proxyOnlyCidr",
        ),
        (
            "gateway-epp-image-latest",
            "vllm",
            {**VLLM, "tpu-serving:gateway": {"inferencePool": True, "eppImage": "epp:latest"}},
            "tpu-serving:gateway.eppImage",
        ),
        (
            "gateway-misspelt-key",
            "vllm",
            {**VLLM, "tpu-serving:gateway": {"inferencepool": True}},
            "tpu-serving:gateway.inferencepool",
        ),
        (
            # MaxText's disaggregated servers hard-code v6e-8 or v5e-16 slices (maxengine_config.py).
            "jetstream-disaggregated-on-slices-maxtext-has-no-server-for",
            "jetstream-pathways",
            {
                **SERVING,
                "tpu-serving:tpuSlices": [{"name": "v6e16", "slice": "v6e-16", "count": 2}],
                "tpu-serving:serving": {**SERVING["tpu-serving:serving"], "mode": "disaggregated"},
            },
            "tpu-serving:serving.mode",
        ),
        (
            "vllm-service-named-like-its-leaderworkerset",
            "vllm",
            with_serving(VLLM, serviceName="vllm"),
            "tpu-serving:serving.serviceName",
        ),
        (
            "jetstream-service-named-like-its-leaderworkerset",
            "jetstream-pathways",
            with_serving(SERVING, serviceName="jetstream-pathways"),
            "tpu-serving:serving.serviceName",
        ),
        (
            "vllm-not-ready-alert-inside-the-startup-window",
            "vllm",
            {**VLLM, "tpu-serving:observability": {"notReadyMinutes": 30}},
            "tpu-serving:observability.notReadyMinutes",
        ),
        (
            "vllm-startup-window-below-the-published-start",
            "vllm",
            with_serving(VLLM, probes={"maxStartupSeconds": 120}),
            "tpu-serving:serving.probes.maxStartupSeconds",
        ),
        (
            "vllm-group-recreation-alert-on-every-recreation",
            "vllm",
            {**VLLM, "tpu-serving:observability": {"groupRecreationsPerHour": 0}},
            "tpu-serving:observability.groupRecreationsPerHour",
        ),
        (
            "vllm-inference-pool-on-a-gke-without-its-crd",
            "vllm",
            {
                **VLLM,
                "tpu-serving:cluster": {
                    "name": "vllm",
                    "minMasterVersion": "1.33.5-gke.1000",
                },
                "tpu-serving:gateway": {"inferencePool": True},
            },
            "tpu-serving:cluster.minMasterVersion",
        ),
        (
            "tenancy-bad-cidr",
            "infrastructure",
            with_change("tpu-serving:tenancy", {"allowedCidrs": ["10.0.0.0/33"]}),
            "tpu-serving:tenancy.allowedCidrs[0]",
        ),
        (
            "tenancy-unknown-key",
            "infrastructure",
            with_change("tpu-serving:tenancy", {"operator": {}}),
            "tpu-serving:tenancy.operator",
        ),
    ]
)


def test_main_table_covers_every_backend():
    assert len(CASES) >= 30
    assert {c[1] for c in CASES} == {"infrastructure", "jetstream-pathways", "saxml", "pathways-job", "vllm"}
    assert len({c[0] for c in CASES}) == len(CASES)


def run_rejected(config: dict) -> tuple[ConfigError, int]:
    """Run the program with ``config``; return its error and how many resources it registered."""
    project = load_project(ROOT)

    def run():
        settings.ROOT.set(None)
        pulumi.runtime.set_all_config(as_engine_config(config))
        monitor = RecordingMonitor(PreviewMocks())
        mocks.set_mocks(monitor.mocks, project=project.name, stack="bad", preview=True, monitor=monitor)
        try:
            _sync_await(run_pulumi_func(main_program(project)))
        except ConfigError as err:
            return err, len(monitor.recorded)
        raise AssertionError("the program accepted a bad stack")

    return contextvars.Context().run(run)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_main_rejected_before_any_resource(case):
    _, _, config, key = case
    err, registered = run_rejected(config)
    assert registered == 0
    assert any(p.startswith(key) for p in err.problems), err.problems
    assert isinstance(err, pulumi.RunError)  # printed by the engine without a traceback
