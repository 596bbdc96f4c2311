"""Backend ``jetstream-pathways``: JetStream + MaxText on Pathways, one LeaderWorkerSet (seeds 000, 001).

Its settings, its checks against the rest of the stack, the resources it builds (the LWS
install and :class:`~tpu_serving.pathways_serving.PathwaysServing`), its stack outputs and
its serving port.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import Field, field_validator, model_validator

from .. import lws
from ..buckets import is_object_path
from ..catalog import SliceShape
from ..controllers import LWS
from ..models import (
    MAXTEXT_MODEL_PARAMETERS,
    ModelSize,
    Precision,
    hbm_fit_problem,
    maxtext_precision,
)
from ..node_identity import Access
from ..observability import ScrapeTarget, ServingMetrics, ServingSignals
from ..pathways_serving import (
    HEALTH_PATH,
    HTTP_PORT,
    METRICS_PATH,
    METRICS_PORT,
    JetStreamMetric,
    MaxTextSettings,
    Mode,
    PathwaysImages,
    PathwaysRequests,
    PathwaysServing,
    PathwaysServingArgs,
    disaggregation_problem,
)
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
from . import scaling
from .base import Backend, Built, Platform, ServingEndpoint, probes_startup_seconds
from .scaling import AutoscalingConfig

if TYPE_CHECKING:
    from ..config.models import StackConfig

NAME = "jetstream-pathways"

# mypy cannot see a model made at runtime: to it, each generated config model is the
# dataclass it mirrors (the same field names and types, which is all the code reads).
if TYPE_CHECKING:
    MaxTextConfig: TypeAlias = MaxTextSettings
    PathwaysImagesConfig: TypeAlias = PathwaysImages
    ProbesConfig: TypeAlias = ProbeSettings
    PathwaysRequestsConfig: TypeAlias = PathwaysRequests
else:
    MaxTextConfig = settings_model(MaxTextSettings, "MaxTextConfig")
    PathwaysImagesConfig = settings_model(PathwaysImages, "PathwaysImagesConfig")
    ProbesConfig = settings_model(ProbeSettings, "ProbesConfig")
    PathwaysRequestsConfig = settings_model(PathwaysRequests, "PathwaysRequestsConfig")

Capability = Literal["SYS_PTRACE", "NET_ADMIN", "SYS_TIME", "SYS_RESOURCE", "IPC_LOCK"]


class JaxTpuConfig(Model):
    """Extra settings of the ``jax-tpu`` container."""

    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    capabilities: list[Capability] = Field(
        default_factory=list, description="Linux capabilities to add (the disaggregated server uses some)."
    )


class ModelSizeConfig(Model):
    """The served model's size, for the HBM fit check."""

    parameters_billions: float = Field(gt=0, description="Parameter count in billions.")
    precision: Precision = Field(description="Precision of the served weights.")


class PathwaysServingConfig(Model):
    """JetStream + MaxText on Pathways, as one LeaderWorkerSet (seeds 000 and 001)."""

    backend: Literal["jetstream-pathways"] = Field(description="Selects this serving backend.")
    mode: Literal["interleaved", "disaggregated"] = Field(
        "interleaved", description="`interleaved` over one or more slices, or `disaggregated` prefill/decode over two."
    )
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries the model is served on.")
    replicas: int = Field(
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


SPANNING = (
    "GKE provisions each slice's node pool on its own, so a group spanning several slices could hold one "
    "slice while it waits for the other"
)
"""Why an autoscaled group takes exactly one slice: a multi-host slice pool scales atomically on its own
("If GKE is unable to deploy one node in the slice, no nodes in the TPU slice node are deployed",
https://cloud.google.com/kubernetes-engine/docs/concepts/tpus), but nothing provisions two pools together."""


def problems(cfg: StackConfig, serving: PathwaysServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """Groups share the slices evenly (one slice each when autoscaled); the buckets exist; parallelism and
    HBM fit the slice."""
    key = f"{PROJECT_NAMESPACE}:serving"
    found = replica_problems(cfg, serving, shape, pools)
    if clash := lws.service_name_problem(serving.name, serving.service_name):
        found.append(f"{key}.serviceName = {json.dumps(serving.service_name)}: {clash}")
    for purpose in ("checkpoints", "scratch"):
        b = cfg.bucket(purpose)
        if b is None or b.workload_access == "none":
            found.append(f"{PROJECT_NAMESPACE}:buckets: {NAME} needs a `{purpose}` bucket the workloads can access")
    return found + _parallelism_problems(key, serving.maxtext, shape) + _fit_problems(serving, shape)


def replica_problems(cfg: StackConfig, serving: PathwaysServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """Fixed groups share the slices evenly (two per group when disaggregated); autoscaled groups take one
    slice each, in interleaved mode, and the HPA needs JetStream's metrics."""
    key = f"{PROJECT_NAMESPACE}:serving"
    if serving.autoscaling is not None:
        found = scaling.autoscaling_problems(
            cfg, serving, shape, pools, JetStreamMetric.PREFILL_BACKLOG.value, spanning=SPANNING
        )
        if serving.mode == "disaggregated":
            found.append(
                f'{key}.autoscaling: mode "disaggregated" spreads each group over two slices (prefill and '
                f"decode), and an autoscaled group takes exactly one slice ({SPANNING}); use mode "
                '"interleaved" or remove autoscaling'
            )
        if not serving.maxtext.prometheus_port:
            found.append(
                f"{key}.autoscaling: the HPA reads JetStream's metrics, which the server exports only on "
                f"maxtext.prometheusPort (unset); set maxtext.prometheusPort (e.g. {METRICS_PORT}) or remove "
                "autoscaling"
            )
        return found
    found = []
    if pools % serving.replicas:
        found.append(f"{key}.replicas = {serving.replicas}: {pools} slice(s) cannot be shared evenly")
    per_group = pools // serving.replicas
    if serving.mode == "disaggregated" and per_group != 2:
        found.append(
            f'{key}.mode = "disaggregated": needs exactly 2 slices per group (prefill and decode), got {per_group}'
        )
    if serving.mode == "disaggregated" and (why := disaggregation_problem(shape)):
        found.append(f'{key}.mode = "disaggregated": {why}')
    return found


def model_size(serving: PathwaysServingConfig) -> ModelSize | None:
    """The declared size, else the size of a MaxText model name the library knows, else None."""
    if serving.model is not None:
        return ModelSize(serving.model.parameters_billions, serving.model.precision)
    mt = serving.maxtext
    known = MAXTEXT_MODEL_PARAMETERS.get(mt.model_name)
    return None if known is None else ModelSize(known, maxtext_precision(mt.quantization, mt.weight_dtype))


def _fit_problems(serving: PathwaysServingConfig, shape: SliceShape) -> list[str]:
    """Every slice of a group holds the whole model (interleaved replicas and both disaggregated halves)."""
    key = f"{PROJECT_NAMESPACE}:serving"
    size = model_size(serving)
    if size is None:
        return [
            f"{key}.model: required for the HBM fit check, since maxtext.modelName "
            f"{json.dumps(serving.maxtext.model_name)} is not a model the library knows; "
            f"known: {', '.join(MAXTEXT_MODEL_PARAMETERS)}"
        ]
    at = f"{key}.model" if serving.model is not None else f"{key}.maxtext.modelName"
    problem = hbm_fit_problem(at, size.parameters_billions, size.precision, shape)
    return [problem] if problem else []


def _parallelism_problems(key: str, mt: Any, shape: SliceShape) -> list[str]:
    dims = {
        "iciFsdpParallelism": mt.ici_fsdp_parallelism,
        "iciAutoregressiveParallelism": mt.ici_autoregressive_parallelism,
        "iciTensorParallelism": mt.ici_tensor_parallelism,
    }
    bad = [k for k, v in dims.items() if v == 0 or v < -1]
    if bad:
        return [f"{key}.maxtext.{k}: must be a positive integer or -1" for k in bad]
    if list(dims.values()).count(-1) > 1:
        return [f"{key}.maxtext: at most one ici parallelism may be -1"]
    known = math.prod(v for v in dims.values() if v != -1)
    if (-1 in dims.values() and shape.chips % known) or (-1 not in dims.values() and known != shape.chips):
        return [
            f"{key}.maxtext: ici parallelism {' x '.join(str(v) for v in dims.values())} does not "
            f"match the {shape.chips} chips of a {shape.topology} slice"
        ]
    return []


def ingress(serving: PathwaysServingConfig) -> tuple[dict[str, str], list[int]]:
    """The leader pods take clients on the JetStream HTTP port."""
    return {"app": serving.name}, [HTTP_PORT]


def metrics(serving: PathwaysServingConfig) -> ServingMetrics:
    """JetStream's metrics from ``jax-tpu`` on the leaders, when ``maxtext.prometheusPort`` is set.

    The Pathways containers (resource manager, IFRT proxy, workers) are closed-source images that
    document no Prometheus endpoint (GKE "Serve an LLM using multi-host TPUs on GKE with JetStream
    and Pathways" and the seeds name none), so nothing else is scraped.
    """
    port = serving.maxtext.prometheus_port
    if not port:
        return ServingMetrics()
    return ServingMetrics(
        scrape=[ScrapeTarget(f"{serving.name}-leaders", ingress(serving)[0], port, METRICS_PATH)],
        signals=ServingSignals(
            requests_waiting=JetStreamMetric.PREFILL_BACKLOG.value,
            time_to_first_token=JetStreamMetric.TIME_TO_FIRST_TOKEN.value,
            time_per_output_token=JetStreamMetric.TIME_PER_OUTPUT_TOKEN.value,
            cache_usage=JetStreamMetric.SLOTS_USED.value,
            cache_title="Decode slots in use",
        ),
    )


def host_network_buckets(serving: PathwaysServingConfig) -> dict[str, Access]:
    """None of its pods is on the host network."""
    return {}


def build(platform: Platform, serving: PathwaysServingConfig) -> Built:
    """The LWS install, the LeaderWorkerSet and its Service (the HTTP entry a gateway may front), and with
    autoscaling the metrics adapter and the HPA."""
    name, identity, buckets = platform.name, platform.identity, platform.buckets
    lws = platform.install(LWS, serving.lws_version, ())
    pools = list(platform.slices.pools)
    workload = PathwaysServing(
        f"{name}-serving",
        PathwaysServingArgs(
            namespace=identity.namespace_name,
            service_account=identity.service_account_name,
            shape=platform.slices.shape,
            num_slices=len(pools) // scaling.groups(serving),
            replicas=serving.replicas,
            autoscaled=serving.autoscaling is not None,
            mode=Mode(serving.mode),
            maxtext=to_settings(serving.maxtext, MaxTextSettings),
            checkpoint_uri=f"gs://{buckets.names['checkpoints']}/{serving.checkpoint_path}",
            scratch_uri=f"gs://{buckets.names['scratch']}/pathways",
            name=serving.name,
            service_name=serving.service_name,
            images=to_settings(serving.images, PathwaysImages),
            probes=to_settings(serving.probes, ProbeSettings),
            requests=to_settings(serving.requests, PathwaysRequests),
            priority_class_name=SERVING_PRIORITY,
            resource_manager_flags=tuple(serving.resource_manager_flags),
            jax_env=serving.jax_tpu.env,
            jax_capabilities=tuple(serving.jax_tpu.capabilities),
            labels=platform.k8s_labels,
        ),
        opts=platform.options(lws, identity.service_account, platform.tenancy, *pools),
    )
    built = Built(
        installs=[lws],
        outputs={
            "service": workload.service.metadata.name,
            "leaderPod": workload.leader_pod,
            "portForward": workload.port_forward,
            "generateExample": workload.generate_example,
        },
        endpoint=ServingEndpoint(serving.service_name, HTTP_PORT, HEALTH_PATH, ingress(serving)[0]),
    )
    if serving.autoscaling is not None:
        scaling.add_autoscaler(platform, built, serving, JetStreamMetric.PREFILL_BACKLOG.value, workload)
    return built


BACKEND = Backend(
    name=NAME,
    settings=PathwaysServingConfig,
    problems=problems,
    ingress=ingress,
    host_network_buckets=host_network_buckets,
    restart_unit_chips=scaling.restart_unit_chips,
    build=build,
    metrics=metrics,
    startup_seconds=probes_startup_seconds,
    always_on_slices=scaling.always_on_slices,
    model_size=model_size,
)
