"""The stack file's ``serving`` block for backend ``jetstream-pathways``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import Field, field_validator, model_validator

from ...catalog.models import ModelSize
from ...common.podspec import ProbeSettings
from ...common.settings import K8sName, Model, SingleGroup, StackInt, declared, settings_model
from ...platform.buckets import is_object_path
from ...platform.controllers import LWS, release_validator
from ...platform.lws import ROLLOUT_DESCRIPTION, Rollout
from ..scaling import AutoscalingConfig
from .args import MaxTextSettings, PathwaysImages, PathwaysRequests, PathwaysServingArgs

NAME = "jetstream-pathways"

# mypy cannot see a model made at runtime: to it, each generated config model is the
# dataclass it mirrors (the same field names and types, which is all the code reads).
if TYPE_CHECKING:
    MaxTextConfig: TypeAlias = MaxTextSettings
    PathwaysImagesConfig: TypeAlias = PathwaysImages
    ProbesConfig: TypeAlias = ProbeSettings
    PathwaysRequestsConfig: TypeAlias = PathwaysRequests
    ModelSizeConfig: TypeAlias = ModelSize
else:
    MaxTextConfig = settings_model(MaxTextSettings, "MaxTextConfig")
    PathwaysImagesConfig = settings_model(PathwaysImages, "PathwaysImagesConfig")
    ProbesConfig = settings_model(ProbeSettings, "ProbesConfig")
    PathwaysRequestsConfig = settings_model(PathwaysRequests, "PathwaysRequestsConfig")
    ModelSizeConfig = settings_model(ModelSize, "ModelSizeConfig")

Capability = Literal["SYS_PTRACE", "NET_ADMIN", "SYS_TIME", "SYS_RESOURCE", "IPC_LOCK"]


class JaxTpuConfig(Model):
    """Extra settings of the ``jax-tpu`` container."""

    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    capabilities: list[Capability] = Field(
        default_factory=list, description="Linux capabilities to add (the disaggregated server uses some)."
    )


class PathwaysServingConfig(Model):
    """JetStream + MaxText on Pathways, as one LeaderWorkerSet (seeds 000 and 001)."""

    backend: Literal["jetstream-pathways"] = Field(description="Selects this serving backend.")
    mode: Literal["interleaved", "disaggregated"] = Field(
        "interleaved", description="`interleaved` over one or more slices, or `disaggregated` prefill/decode over two."
    )
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries the model is served on.")
    replicas: StackInt = Field(
        1,
        ge=1,
        le=16,
        description="Leader-worker groups; each takes its own share of the slices. Leave unset with `autoscaling`.",
    )
    autoscaling: AutoscalingConfig | None = Field(
        None,
        description="Scale the groups on the leaders' prefill backlog through an HPA, one whole slice per group "
        "(interleaved, `maxReplicas` equal to the serving slices): the first `minReplicas` serving slices keep "
        "their VMs, the others scale from zero when a group needs one. Needs `maxtext.prometheusPort`.",
    )
    name: K8sName = Field("jetstream-pathways", description="LeaderWorkerSet name; the first leader pod is `<name>-0`.")
    service_name: K8sName = Field("jetstream-svc", description="Name of the ClusterIP Service on port 8000.")
    rollout: Rollout = Field(Rollout.IN_PLACE, description=ROLLOUT_DESCRIPTION)
    canary_groups: StackInt | None = declared(PathwaysServingArgs, "canary_groups")
    single_group: SingleGroup = None
    lws_version: Annotated[str, release_validator(LWS)] = Field(
        LWS.default_version, description="LeaderWorkerSet release installed by the stack (v0.4.0 or later)."
    )
    checkpoint_path: str = Field(description="Path of the MaxText checkpoint inside the stack's `checkpoints` bucket.")
    maxtext: MaxTextConfig = Field(description="MaxText/JetStream server settings.")
    images: PathwaysImagesConfig = Field(default_factory=PathwaysImagesConfig, description="Container images.")
    probes: ProbesConfig = Field(default_factory=ProbesConfig, description="Health probe timing of `jax-tpu`.")
    requests: PathwaysRequestsConfig = Field(
        default_factory=PathwaysRequestsConfig, description="CPU and memory requests of the containers."
    )
    resource_manager_flags: list[str] = Field(
        default_factory=list, description="Extra flags of the Pathways resource manager."
    )
    jax_tpu: JaxTpuConfig = Field(default_factory=JaxTpuConfig, description="Extra settings of `jax-tpu`.")
    model: ModelSizeConfig | None = Field(
        None,
        description="Size of the served model for the HBM fit check; unset derives it from `maxtext.modelName` "
        "(a known MaxText model) and `maxtext.quantization`/`weightDtype`.",
    )

    @model_validator(mode="after")
    def _prefill_within_target(self) -> PathwaysServingConfig:
        mt = self.maxtext
        if mt.max_prefill_predict_length > mt.max_target_length:
            raise ValueError(
                f"maxtext.maxPrefillPredictLength ({mt.max_prefill_predict_length}) must not exceed "
                f"maxtext.maxTargetLength ({mt.max_target_length}): the target length includes the prompt"
            )
        return self

    @field_validator("checkpoint_path")
    @classmethod
    def _relative_path(cls, v: str) -> str:
        if not is_object_path(v):
            raise ValueError("must be a path inside the stack's checkpoints bucket, e.g. llama3.1-405b/int8/0/items")
        return v
