"""The stack file's ``serving`` block for backend ``vllm``: its config model and the model size it serves."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import AfterValidator, Field, field_validator
from pydantic.alias_generators import to_camel

from ...catalog import SliceShape
from ...catalog.models import ModelSize, size_example
from ...common.settings import (
    PROJECT_NAMESPACE,
    K8sName,
    Model,
    SingleGroup,
    StackBool,
    StackInt,
    declared,
    settings_model,
    to_settings,
)
from ...common.spread import ZoneSpread
from ...common.validation import raising
from ...platform.buckets import is_object_path
from ...platform.controllers import LWS, release_validator
from ...platform.lws import ROLLOUT_DESCRIPTION, Rollout
from ...pools.compute_class import FALLBACK_DESCRIPTION, Fallback
from ..scaling import AutoscalingConfig
from .args import (
    Keys,
    SecretKey,
    VllmEngineSettings,
    VllmImages,
    VllmRequests,
    VllmServingArgs,
    WeightsLoader,
    aliases_problem,
    revision_problem,
    served_size,
)
from .file_cache import FileCache, memory_gib, pod_memory
from .kv import KvTransfer
from .progress import VllmProbeSettings

NAME = "vllm"

CACHE_FOLDER = "vllm-compilation-cache"
"""Folder of the XLA compilation cache in the scratch bucket (one sub-folder per LeaderWorkerSet)."""

DISK_ALLOWANCE_GIB = 40
"""Boot disk a TPU VM needs besides the FUSE file cache: the node image, the vLLM TPU image
(about 10 GiB unpacked) and logs. A file cache on the boot disk (the sidecar's default cache
volume is an emptyDir: :mod:`.file_cache`) must hold the whole model next to them."""

if TYPE_CHECKING:
    EngineConfig: TypeAlias = VllmEngineSettings
    VllmImagesConfig: TypeAlias = VllmImages
    VllmRequestsConfig: TypeAlias = VllmRequests
    VllmProbesConfig: TypeAlias = VllmProbeSettings
    SecretKeyConfig: TypeAlias = SecretKey
    VllmModelSizeConfig: TypeAlias = ModelSize
else:
    EngineConfig = settings_model(VllmEngineSettings, "VllmEngineConfig")
    VllmImagesConfig = settings_model(VllmImages, "VllmImagesConfig")
    VllmRequestsConfig = settings_model(VllmRequests, "VllmRequestsConfig")
    VllmProbesConfig = settings_model(VllmProbeSettings, "VllmProbesConfig")
    SecretKeyConfig = settings_model(SecretKey, "SecretKeyConfig")
    VllmModelSizeConfig = settings_model(ModelSize, "VllmModelSizeConfig")

STACK = Keys(f"{PROJECT_NAMESPACE}:serving.", to_camel, "serving.modelSize", size_example("modelSize", attention=True))
"""The stack file's spelling of the HBM fit's messages (:func:`~.args.fit_problems`)."""


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
    served_model_aliases: Annotated[tuple[str, ...], AfterValidator(raising(aliases_problem))] = declared(
        VllmServingArgs, "served_model_aliases"
    )
    file_cache: FileCache = declared(VllmServingArgs, "file_cache")
    zone_spread: ZoneSpread = declared(VllmServingArgs, "zone_spread")
    loader: WeightsLoader = Field(
        WeightsLoader.GCSFUSE,
        description="`gcsfuse` (read-only Cloud Storage FUSE volume with parallel downloads), `runai-streamer` "
        "(the Run:ai model streamer reads gs:// directly) or `hugging-face` (downloads from the Hub at start).",
    )
    model_revision: Annotated[str | None, AfterValidator(raising(revision_problem))] = declared(
        VllmServingArgs, "model_revision"
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
    fallback: list[Fallback] | None = Field(None, min_length=1, description=FALLBACK_DESCRIPTION)
    disaggregation: DisaggregationConfig | None = Field(
        None,
        description="Serve prefill and decode on separate slices (a LeaderWorkerSet DisaggregatedSet, tpu-inference's "
        "TPU KV connector, the llm-d router's prefill/decode endpoint picker): each role names its slice kind, "
        "replicas or autoscaling and engine; `replicas`, `autoscaling`, `engine` and a `surge` rollout are then the "
        "roles' and refused here.",
    )
    model_size: VllmModelSizeConfig | None = declared(VllmServingArgs, "model_size")

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        if not is_object_path(v):
            raise ValueError(
                "must be a folder inside the stack's checkpoints bucket (e.g. llama-3.3-70b-instruct) "
                "or, with loader hugging-face, a repository id"
            )
        return v


def declared_size(serving: VllmServingConfig) -> ModelSize | None:
    """The size ``serving.modelSize`` declares, as the component's argument takes it."""
    return None if serving.model_size is None else to_settings(serving.model_size, ModelSize)


def engines(serving: VllmServingConfig) -> list[tuple[str, VllmEngineSettings]]:
    """The engines that hold the model, each with the suffix of its key in a fit message: the one engine, or each
    disaggregated role's on its own slice (prefill first: its dtype and quantization are decode's too,
    :func:`~.disagg_args.kv_layout_problems`)."""
    if serving.disaggregation is None:
        return [("", to_settings(serving.engine, VllmEngineSettings))]
    d = serving.disaggregation
    return [
        (f" ({STACK.prefix}disaggregation.{role}.engine)", to_settings(r.engine, VllmEngineSettings))
        for role, r in (("prefill", d.prefill), ("decode", d.decode))
    ]


def served_model_size(serving: VllmServingConfig) -> ModelSize | None:
    """The served model's size for the capacity report and the disk check, or None when unknown."""
    return served_size(declared_size(serving), serving.served_model_name, engines(serving)[0][1])


def memory_cache_gib(serving: VllmServingConfig, shape: SliceShape) -> int | None:
    """GiB of the memory-backed file cache on a VM of ``shape`` (:mod:`.file_cache`), or None: on the boot disk, or
    no file cache (a loader other than ``gcsfuse``)."""
    if serving.loader != WeightsLoader.GCSFUSE:
        return None
    size, r = served_model_size(serving), to_settings(serving.requests, VllmRequests)
    return memory_gib(serving.file_cache, shape.machine_type.name, pod_memory(r), None if size is None else size.gib)
