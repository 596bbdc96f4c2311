"""The stack file's ``serving`` block for backend ``vllm``: its config model and the model size it serves."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import Field, field_validator

from ...buckets import is_object_path
from ...controllers import LWS
from ...lws import ROLLOUT_DESCRIPTION, Rollout
from ...models import HUGGING_FACE_MODELS, ModelSize, Precision, size_example
from ...settings import (
    PROJECT_NAMESPACE,
    K8sName,
    Model,
    SingleGroup,
    StackBool,
    StackFloat,
    StackInt,
    declared,
    release_validator,
    settings_model,
    to_settings,
)
from ..scaling import AutoscalingConfig

if TYPE_CHECKING:
    pass
from .args import (
    Dtype,
    SecretKey,
    VllmEngineSettings,
    VllmImages,
    VllmQuantization,
    VllmRequests,
    VllmServingArgs,
    WeightsLoader,
)
from .kv import KvTransfer
from .progress import VllmProbeSettings

if TYPE_CHECKING:
    pass

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
    VllmProbesConfig: TypeAlias = VllmProbeSettings
    SecretKeyConfig: TypeAlias = SecretKey
else:
    EngineConfig = settings_model(VllmEngineSettings, "VllmEngineConfig")
    VllmImagesConfig = settings_model(VllmImages, "VllmImagesConfig")
    VllmRequestsConfig = settings_model(VllmRequests, "VllmRequestsConfig")
    VllmProbesConfig = settings_model(VllmProbeSettings, "VllmProbesConfig")
    SecretKeyConfig = settings_model(SecretKey, "SecretKeyConfig")


class VllmModelSizeConfig(Model):
    """The served model's size, for the HBM fit check."""

    parameters_billions: StackFloat = Field(gt=0, description="Parameter count in billions.")
    precision: Precision = Field(description="Precision of the served weights.")


class VllmRoleConfig(Model):
    """One role of the disaggregated mode: its slices, its groups and its engine."""

    slice: str = Field(
        description="The `tpuSlices` entry (slice kind) whose slices the role's groups take, one whole slice each; "
        "each role has a kind of its own, listed in `serving.slices`."
    )
    replicas: StackInt = declared(VllmServingArgs, "replicas")
    autoscaling: AutoscalingConfig | None = Field(
        None,
        description="Scale the role's groups through an HPA on its DisaggregatedSetRoleScaler, a whole slice per "
        "group, on the role's own gauge (prefill: `vllm:num_requests_waiting`; decode: `vllm:kv_cache_usage_perc` "
        "unless `metric` says otherwise, a fraction of one: set `target` below 1, e.g. 0.8): the first `minReplicas` "
        "of its slices keep their VMs, the others scale from zero.",
    )
    engine: EngineConfig = Field(
        default_factory=EngineConfig,
        description="Engine settings of the role's `vllm serve`. The KV cache layout (dtype, quantization, "
        "blockSize, tensor parallelism) must be the other role's; memoryUtilization may differ.",
    )


class DisaggregationConfig(Model):
    """Prefill and decode on separate slices, the KV cache moving between them over the data-centre network."""

    prefill: VllmRoleConfig = Field(description="The prefill role (KV producer).")
    decode: VllmRoleConfig = Field(description="The decode role (KV consumer, behind the llm-d router's sidecar).")
    sidecar_image: str = declared(KvTransfer, "sidecar_image")
    kv_pull_timeout_seconds: StackInt = declared(KvTransfer, "pull_timeout_seconds")


class VllmServingConfig(Model):
    """vLLM TPU on a LeaderWorkerSet: one group per slice, Ray across the slice's VMs."""

    backend: Literal["vllm"] = Field(description="Selects this serving backend.")
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries the model is served on.")
    replicas: StackInt = declared(VllmServingArgs, "replicas")
    autoscaling: AutoscalingConfig | None = Field(
        None,
        description="Scale the groups on the leaders' queue through an HPA, a whole slice per group: the first "
        "`minReplicas` serving slices keep their VMs, the others scale from zero when a group needs one.",
    )
    name: K8sName = declared(VllmServingArgs, "name")
    service_name: K8sName = declared(VllmServingArgs, "service_name")
    rollout: Rollout = Field(Rollout.IN_PLACE, description=ROLLOUT_DESCRIPTION)
    canary_groups: StackInt | None = declared(VllmServingArgs, "canary_groups")
    single_group: SingleGroup = None
    lws_version: Annotated[str, release_validator(LWS)] = Field(
        LWS.default_version, description="LeaderWorkerSet release installed by the stack (v0.4.0 or later)."
    )
    model: str = Field(
        description="The weights: a folder in the stack's `checkpoints` bucket holding a Hugging Face snapshot "
        "(config, tokenizer, safetensors), or a Hugging Face repository id with `loader: hugging-face`."
    )
    served_model_name: str = declared(VllmServingArgs, "served_model_name")
    loader: WeightsLoader = Field(
        WeightsLoader.GCSFUSE,
        description="`gcsfuse` (read-only Cloud Storage FUSE volume with parallel downloads), `runai-streamer` "
        "(the Run:ai model streamer reads gs:// directly) or `hugging-face` (downloads from the Hub at start).",
    )
    hf_token_secret: SecretKeyConfig | None = Field(
        None,
        description="Kubernetes Secret (name, key) holding a Hugging Face token; only with `loader: hugging-face`.",
    )
    compilation_cache: StackBool = Field(
        True,
        description=f"Persist the XLA compilation cache in the `scratch` bucket (`{CACHE_FOLDER}/<name>`), so a "
        "restarted group loads its compiled programs instead of recompiling.",
    )
    engine: EngineConfig = Field(default_factory=EngineConfig, description="Engine settings of `vllm serve`.")
    images: VllmImagesConfig = Field(default_factory=VllmImagesConfig, description="Container image.")
    probes: VllmProbesConfig = Field(
        default_factory=VllmProbesConfig,
        description="Probe timing of the server (`GET /health`), and how long its engine may generate nothing while "
        "requests run before liveness fails.",
    )
    requests: VllmRequestsConfig = Field(
        default_factory=VllmRequestsConfig, description="CPU, memory and `/dev/shm` of the pods."
    )
    disaggregation: DisaggregationConfig | None = Field(
        None,
        description="Serve prefill and decode on separate slices (a LeaderWorkerSet DisaggregatedSet, tpu-inference's "
        "TPU KV connector, the llm-d router's prefill/decode endpoint picker): each role names its slice kind, "
        "replicas or autoscaling and engine; `replicas`, `autoscaling`, `engine` and a `surge` rollout are then the "
        "roles' and refused here.",
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
            f"{json.dumps(serving.served_model_name)} is not a model the library knows; {size_example('modelSize')}; "
            f"known: {', '.join(HUGGING_FACE_MODELS)}"
        )
    # disaggregated roles share the dtype and quantization (disagg_args.kv_layout_problems): prefill's stands for both
    engine = serving.disaggregation.prefill.engine if serving.disaggregation is not None else serving.engine
    precision = served_precision(to_settings(engine, VllmEngineSettings), known.precision)
    return known.parameters_billions, precision, f"{key}.servedModelName"


def served_model_size(serving: VllmServingConfig) -> ModelSize | None:
    """The served model's size for the capacity report, or None when unknown."""
    size = model_size(serving)
    return None if isinstance(size, str) else ModelSize(size[0], size[1])
