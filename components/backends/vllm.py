"""Backend ``vllm``: vLLM TPU (vllm-project/tpu-inference) on a LeaderWorkerSet, one group per slice.

Its settings, its checks against the rest of the stack, the resources it builds (the LWS
install and :class:`~tpu_serving.vllm_serving.VllmServing`), its stack outputs and its
serving port.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import Field, field_validator

from .. import lws
from ..buckets import is_object_path
from ..catalog import SliceShape
from ..controllers import LWS
from ..models import HUGGING_FACE_MODELS, ModelSize, Precision, weight_gib
from ..node_identity import Access
from ..observability import ScrapeTarget, ServingMetrics, ServingSignals
from ..podspec import ProbeSettings
from ..settings import (
    PROJECT_NAMESPACE,
    K8sName,
    Model,
    release_validator,
    settings_model,
    to_settings,
)
from ..tenancy import SERVING_PRIORITY
from ..vllm_serving import (
    HEALTH_PATH,
    HTTP_PORT,
    METRICS_PATH,
    ROLE_LABEL,
    Dtype,
    SecretKey,
    VllmEngineSettings,
    VllmImages,
    VllmMetric,
    VllmQuantization,
    VllmRequests,
    VllmServing,
    VllmServingArgs,
    WeightsLoader,
    parallelism_problems,
)
from . import scaling
from .base import Backend, Built, Platform, ServingEndpoint, probes_startup_seconds
from .scaling import AutoscalingConfig

if TYPE_CHECKING:
    from ..config.models import StackConfig

NAME = "vllm"

CACHE_FOLDER = "vllm-compilation-cache"
"""Folder of the XLA compilation cache in the scratch bucket (one sub-folder per LeaderWorkerSet)."""

DISK_ALLOWANCE_GIB = 40
"""Boot disk a TPU VM needs besides the FUSE file cache: the node image, the vLLM TPU image
(about 10 GiB unpacked) and logs. The file cache lives on the boot disk (the sidecar's cache
volume is an emptyDir), so it must hold the whole model next to them."""

if TYPE_CHECKING:
    EngineConfig: TypeAlias = VllmEngineSettings
    VllmImagesConfig: TypeAlias = VllmImages
    VllmRequestsConfig: TypeAlias = VllmRequests
    VllmProbesConfig: TypeAlias = ProbeSettings
    SecretKeyConfig: TypeAlias = SecretKey
else:
    EngineConfig = settings_model(VllmEngineSettings, "VllmEngineConfig")
    VllmImagesConfig = settings_model(VllmImages, "VllmImagesConfig")
    VllmRequestsConfig = settings_model(VllmRequests, "VllmRequestsConfig")
    VllmProbesConfig = settings_model(ProbeSettings, "VllmProbesConfig")
    SecretKeyConfig = settings_model(SecretKey, "SecretKeyConfig")


class VllmModelSizeConfig(Model):
    """The served model's size, for the HBM fit check."""

    parameters_billions: float = Field(gt=0, description="Parameter count in billions.")
    precision: Precision = Field(description="Precision of the served weights.")


class VllmServingConfig(Model):
    """vLLM TPU on a LeaderWorkerSet: one group per slice, Ray across the slice's VMs."""

    backend: Literal["vllm"] = Field(description="Selects this serving backend.")
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries the model is served on.")
    replicas: int = Field(
        1,
        ge=1,
        le=64,
        description="Leader-worker groups; each takes one whole slice. Leave unset with `autoscaling`.",
    )
    autoscaling: AutoscalingConfig | None = Field(
        None,
        description="Scale the groups on the leaders' queue through an HPA, a whole slice per group: the first "
        "`minReplicas` serving slices keep their VMs, the others scale from zero when a group needs one.",
    )
    name: K8sName = Field("vllm", description="LeaderWorkerSet name; the first leader pod is `<name>-0`.")
    service_name: K8sName = Field(
        "vllm-api",
        description="Name of the ClusterIP Service on port 8000; not the LeaderWorkerSet's name, whose headless "
        "Service the LWS controller creates.",
    )
    lws_version: Annotated[str, release_validator(LWS)] = Field(
        LWS.default_version, description="LeaderWorkerSet release installed by the stack (v0.4.0 or later)."
    )
    model: str = Field(
        description="The weights: a folder in the stack's `checkpoints` bucket holding a Hugging Face snapshot "
        "(config, tokenizer, safetensors), or a Hugging Face repository id with `loader: hugging-face`."
    )
    served_model_name: str = Field(
        min_length=1,
        max_length=256,
        description="The model name clients send, e.g. `meta-llama/Llama-3.3-70B-Instruct`.",
    )
    loader: WeightsLoader = Field(
        WeightsLoader.GCSFUSE,
        description="`gcsfuse` (read-only Cloud Storage FUSE volume with parallel downloads), `runai-streamer` "
        "(the Run:ai model streamer reads gs:// directly) or `hugging-face` (downloads from the Hub at start).",
    )
    hf_token_secret: SecretKeyConfig | None = Field(
        None,
        description="Kubernetes Secret (name, key) holding a Hugging Face token; only with `loader: hugging-face`.",
    )
    compilation_cache: bool = Field(
        True,
        description=f"Persist the XLA compilation cache in the `scratch` bucket (`{CACHE_FOLDER}/<name>`), so a "
        "restarted group loads its compiled programs instead of recompiling.",
    )
    engine: EngineConfig = Field(default_factory=EngineConfig, description="Engine settings of `vllm serve`.")
    images: VllmImagesConfig = Field(default_factory=VllmImagesConfig, description="Container image.")
    probes: VllmProbesConfig = Field(
        default_factory=VllmProbesConfig, description="Probe timing of the server (`GET /health`)."
    )
    requests: VllmRequestsConfig = Field(
        default_factory=VllmRequestsConfig, description="CPU, memory and `/dev/shm` of the pods."
    )
    model_size: VllmModelSizeConfig | None = Field(
        None,
        description="Size of the served model for the HBM fit check; unset derives it from `servedModelName` "
        "(an exact Hugging Face id the library knows) and `engine.quantization`/`dtype`.",
    )

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        if not is_object_path(v):
            raise ValueError(
                "must be a folder inside the stack's checkpoints bucket (e.g. llama-3.3-70b-instruct) "
                "or, with loader hugging-face, a repository id"
            )
        return v


def served_precision(engine: VllmEngineSettings, released: Precision) -> Precision:
    """The precision the served weights have: fp8 when quantized at load, the checkpoint's own for
    a pre-quantized checkpoint or ``dtype: auto``, else the dtype."""
    if engine.quantization == VllmQuantization.FP8:
        return "fp8"
    if engine.quantization is not None or engine.dtype == Dtype.AUTO:
        return released
    return "fp32" if engine.dtype == Dtype.FLOAT32 else "bf16"


def model_size(serving: VllmServingConfig) -> tuple[float, Precision, str] | str:
    """``(billions, precision, key)`` of the served model, or why it is unknown."""
    key = f"{PROJECT_NAMESPACE}:serving"
    if serving.model_size is not None:
        return serving.model_size.parameters_billions, serving.model_size.precision, f"{key}.modelSize"
    known = HUGGING_FACE_MODELS.get(serving.served_model_name)
    if known is None:
        return (
            f"{key}.modelSize: required for the HBM fit check, since servedModelName "
            f"{json.dumps(serving.served_model_name)} is not a model the library knows; "
            f"known: {', '.join(HUGGING_FACE_MODELS)}"
        )
    precision = served_precision(to_settings(serving.engine, VllmEngineSettings), known.precision)
    return known.parameters_billions, precision, f"{key}.servedModelName"


def served_model_size(serving: VllmServingConfig) -> ModelSize | None:
    """The served model's size for the capacity report, or None when unknown."""
    size = model_size(serving)
    return None if isinstance(size, str) else ModelSize(size[0], size[1])


def problems(cfg: StackConfig, serving: VllmServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """One group per slice; the buckets exist; parallelism, HBM and the file cache fit the slice."""
    key = f"{PROJECT_NAMESPACE}:serving"
    found = replica_problems(cfg, serving, shape, pools)
    if serving.loader != WeightsLoader.HUGGING_FACE:
        b = cfg.bucket("checkpoints")
        if b is None or b.workload_access == "none":
            found.append(f"{PROJECT_NAMESPACE}:buckets: {NAME} needs a `checkpoints` bucket the workloads can read")
    if serving.compilation_cache:
        b = cfg.bucket("scratch")
        if b is None or b.workload_access != "readWrite":
            found.append(
                f"{key}.compilationCache = true: needs a `scratch` bucket with workloadAccess readWrite "
                f"({PROJECT_NAMESPACE}:buckets)"
            )
    if serving.hf_token_secret is not None and serving.loader != WeightsLoader.HUGGING_FACE:
        found.append(
            f"{key}.hfTokenSecret: only read with loader hugging-face (loader is {json.dumps(serving.loader.value)})"
        )
    found += parallelism_problems(f"{key}.engine", to_settings(serving.engine, VllmEngineSettings), shape)
    if clash := lws.service_name_problem(serving.name, serving.service_name):
        found.append(f"{key}.serviceName = {json.dumps(serving.service_name)}: {clash}")
    size = model_size(serving)
    if isinstance(size, str):
        return [*found, size]
    billions, precision, at = size
    found += _fit_problems(at, billions, precision, serving.engine.memory_utilization, shape)
    if serving.loader == WeightsLoader.GCSFUSE:
        found += _disk_problems(cfg, serving, weight_gib(billions, precision))
    return found


def replica_problems(cfg: StackConfig, serving: VllmServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """Each group takes one whole slice: the fixed count, or the autoscaled maximum, equals the serving slices."""
    if serving.autoscaling is not None:
        return scaling.autoscaling_problems(cfg, serving, shape, pools, VllmMetric.REQUESTS_WAITING.value)
    if serving.replicas == pools:
        return []
    return [
        f"{PROJECT_NAMESPACE}:serving.replicas = {serving.replicas}: each vLLM group takes one whole slice, and "
        f"serving.slices provide {pools}; set replicas to {pools} or change the slices' count"
    ]


def _fit_problems(at: str, billions: float, precision: str, utilization: float, shape: SliceShape) -> list[str]:
    """The weights must fit in the share of the slice's HBM the engine may use, leaving room for KV cache."""
    need = weight_gib(billions, precision)
    usable = shape.hbm_gib * utilization
    if need <= usable:
        return []
    return [
        f"{at}: {billions:g}B parameters in {precision} need about {need:.0f} GiB of HBM, more than the "
        f"{usable:.0f} GiB the engine may use on one {shape.topology} slice ({shape.hbm_gib} GiB x "
        f"engine.memoryUtilization {utilization:g}); use a larger slice, quantize "
        f"(engine.quantization) or declare the real size"
    ]


def _disk_problems(cfg: StackConfig, serving: VllmServingConfig, weights: float) -> list[str]:
    """The FUSE file cache holds the whole model on each VM's boot disk."""
    found = []
    for i, s in enumerate(cfg.tpu_slices):
        if s.name not in serving.slices:
            continue
        have = s.disk_size_gb * 1e9 / 2**30
        need = weights + DISK_ALLOWANCE_GIB
        if have < need:
            found.append(
                f"{PROJECT_NAMESPACE}:tpuSlices[{i}].diskSizeGb = {s.disk_size_gb}: loader gcsfuse caches the "
                f"weights ({weights:.0f} GiB) on each VM's boot disk next to the images ({DISK_ALLOWANCE_GIB} GiB); "
                f"needs at least {int(need * 2**30 / 1e9) + 1} GB"
            )
    return found


def leaders(serving: VllmServingConfig) -> dict[str, str]:
    """Labels of the leader pods, which run the OpenAI-compatible server."""
    return {lws.NAME_LABEL: serving.name, ROLE_LABEL: "leader"}


def ingress(serving: VllmServingConfig) -> tuple[dict[str, str], list[int]]:
    """The leader pods take clients on the serving port."""
    return leaders(serving), [HTTP_PORT]


def metrics(serving: VllmServingConfig) -> ServingMetrics:
    """The leaders' server exports vLLM's metrics on the serving port; the workers run Ray workers only."""
    return ServingMetrics(
        scrape=[ScrapeTarget(f"{serving.name}-leaders", leaders(serving), HTTP_PORT, METRICS_PATH)],
        signals=ServingSignals(
            requests_running=VllmMetric.REQUESTS_RUNNING.value,
            requests_waiting=VllmMetric.REQUESTS_WAITING.value,
            time_to_first_token=VllmMetric.TIME_TO_FIRST_TOKEN.value,
            time_per_output_token=VllmMetric.INTER_TOKEN_LATENCY.value,
            cache_usage=VllmMetric.KV_CACHE_USAGE.value,
        ),
    )


def host_network_buckets(serving: VllmServingConfig) -> dict[str, Access]:
    """None of its pods is on the host network."""
    return {}


def build(platform: Platform, serving: VllmServingConfig) -> Built:
    """The LWS install, the LeaderWorkerSet and its Service, and with autoscaling the metrics adapter and the HPA."""
    name, identity, buckets = platform.name, platform.identity, platform.buckets
    lws_install = platform.install(LWS, serving.lws_version, ())
    pools = list(platform.slices.pools)
    hf = serving.loader == WeightsLoader.HUGGING_FACE
    workload = VllmServing(
        f"{name}-serving",
        VllmServingArgs(
            namespace=identity.namespace_name,
            service_account=identity.service_account_name,
            shape=platform.slices.shape,
            model=serving.model,
            served_model_name=serving.served_model_name,
            loader=serving.loader,
            weights_bucket=None if hf else buckets.names["checkpoints"],
            cache_bucket=buckets.names["scratch"] if serving.compilation_cache else None,
            cache_path=f"{CACHE_FOLDER}/{serving.name}",
            hf_token_secret=to_settings(serving.hf_token_secret, SecretKey) if serving.hf_token_secret else None,
            replicas=serving.replicas,
            autoscaled=serving.autoscaling is not None,
            name=serving.name,
            service_name=serving.service_name,
            engine=to_settings(serving.engine, VllmEngineSettings),
            images=to_settings(serving.images, VllmImages),
            probes=to_settings(serving.probes, ProbeSettings),
            requests=to_settings(serving.requests, VllmRequests),
            priority_class_name=SERVING_PRIORITY,
            labels=platform.k8s_labels,
        ),
        opts=platform.options(lws_install, identity.service_account, platform.tenancy, *pools),
    )
    built = Built(
        installs=[lws_install],
        outputs={
            "service": workload.service.metadata.name,
            "leaderPod": workload.leader_pod,
            "portForward": workload.port_forward,
            "completionExample": workload.completion_example,
        },
        endpoint=ServingEndpoint(serving.service_name, HTTP_PORT, HEALTH_PATH, ingress(serving)[0]),
    )
    if serving.autoscaling is not None:
        scaling.add_autoscaler(platform, built, serving, VllmMetric.REQUESTS_WAITING.value, workload)
    return built


BACKEND = Backend(
    name=NAME,
    settings=VllmServingConfig,
    problems=problems,
    ingress=ingress,
    host_network_buckets=host_network_buckets,
    restart_unit_chips=scaling.restart_unit_chips,
    build=build,
    metrics=metrics,
    startup_seconds=probes_startup_seconds,
    always_on_slices=scaling.always_on_slices,
    model_size=served_model_size,
)
