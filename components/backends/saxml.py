"""Backend ``saxml``: Saxml over multi-host TPU slices, with declarative model publication (seed 002).

Its settings, its checks against the rest of the stack, the resources it builds (the JobSet
install and :class:`~tpu_serving.saxml_serving.SaxmlServing`), its stack outputs and its
serving port.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

import pulumi
from pydantic import Field, field_validator, model_validator

from ..catalog import SliceShape
from ..controllers import JOBSET
from ..models import ModelSize, Precision, hbm_fit_problem
from ..node_identity import Access
from ..observability import ServingMetrics
from ..saxml_serving import (
    HTTP_PORT,
    MODEL_SERVER_BUCKETS,
    Exposure,
    SaxmlImages,
    SaxmlServing,
    SaxmlServingArgs,
    SaxModel,
)
from ..settings import (
    PROJECT_NAMESPACE,
    Cidr,
    Model,
    release_validator,
    settings_model,
    to_settings,
)
from ..tenancy import SERVING_PRIORITY
from .base import Backend, Built, Platform

if TYPE_CHECKING:
    from ..config.models import StackConfig

NAME = "saxml"

PRIVILEGED_BEFORE = (1, 28)
"""GKE minor below which TPU access needed privileged containers (``privileged: auto``)."""

# mypy cannot see a model made at runtime: to it, each generated config model is the
# dataclass it mirrors (the same field names and types, which is all the code reads).
if TYPE_CHECKING:
    SaxmlImagesConfig: TypeAlias = SaxmlImages
else:
    SaxmlImagesConfig = settings_model(SaxmlImages, "SaxmlImagesConfig")


class SaxModelConfig(Model):
    """A model the Saxml cell serves; published by the stack, unpublished when removed."""

    model: str = Field(description="Model path in the cell, e.g. `/sax/test/spmd`.")
    model_path: str = Field(
        description="Saxml model class, e.g. `saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test`."
    )
    checkpoint: str = Field("None", description="Checkpoint path, or `None` for random weights.")
    replicas: int = Field(1, ge=1, le=64, description="Model server replicas; each takes one slice.")
    parameters_billions: float = Field(gt=0, description="Parameter count in billions, for the HBM sizing check.")
    weight_precision: Precision = Field(
        "bf16", description="Precision of the served weights, for the HBM sizing check."
    )

    @field_validator("model")
    @classmethod
    def _model_path(cls, v: str) -> str:
        if not re.match(r"^/sax/[a-z0-9_-]+/[A-Za-z0-9_.-]+$", v):
            raise ValueError("must be a Sax model path /sax/<cell>/<model>, e.g. /sax/test/spmd")
        return v


class SaxmlHttpConfig(Model):
    """How sax-http is exposed."""

    exposure: Literal["internal", "public", "cluster"] = Field(
        "internal",
        description="`internal` LoadBalancer (VPC only), `public` LoadBalancer (needs sourceRanges), or `cluster` (ClusterIP).",
    )
    source_ranges: list[Cidr] = Field(
        default_factory=list, description="CIDR blocks allowed to reach the load balancer."
    )

    @model_validator(mode="after")
    def _public_needs_ranges(self) -> SaxmlHttpConfig:
        if self.exposure == "public" and not self.source_ranges:
            raise ValueError("a public load balancer needs sourceRanges (the CIDR blocks allowed in)")
        return self


class SaxmlServingConfig(Model):
    """Saxml on multi-host TPU slices (seed 002)."""

    backend: Literal["saxml"] = Field(description="Selects this serving backend.")
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries that run model servers.")
    cell: str = Field("/sax/test", pattern=r"^/sax/[a-z0-9_-]+$", description="The Sax cell, e.g. `/sax/test`.")
    jobset_version: Annotated[str, release_validator(JOBSET)] = Field(
        JOBSET.default_version, description="JobSet release installed by the stack (v0.2.3 or later)."
    )
    images: SaxmlImagesConfig = Field(default_factory=SaxmlImagesConfig, description="Container images.")
    max_restarts: int = Field(4, ge=0, le=100, description="JobSet failurePolicy.maxRestarts.")
    privileged: Literal["auto", "always", "never"] = Field(
        "auto",
        description="Privileged model servers: `auto` only when cluster.minMasterVersion is below 1.28 "
        "(GKE's TPU access needed it there), or `always`/`never`.",
    )
    http: SaxmlHttpConfig = Field(default_factory=SaxmlHttpConfig, description="Exposure of sax-http.")
    models: list[SaxModelConfig] = Field(default_factory=list, description="Models to publish (declarative).")
    publish_timeout_seconds: int = Field(
        1800, ge=60, le=7200, description="How long publication waits for sax-http and the model replicas."
    )


def model_size(serving: SaxmlServingConfig) -> ModelSize | None:
    """The largest of the published models (each replica holds one copy on its slice)."""
    sizes = [ModelSize(m.parameters_billions, m.weight_precision) for m in serving.models]
    return max(sizes, key=lambda m: m.gib, default=None)


def problems(cfg: StackConfig, serving: SaxmlServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """The state bucket exists; every model is in the cell, listed once, fits its slice and its replicas."""
    key = f"{PROJECT_NAMESPACE}:serving"
    found: list[str] = []
    state = cfg.bucket("state")
    if state is None or state.workload_access != "readWrite":
        found.append(f"{PROJECT_NAMESPACE}:buckets: saxml needs a `state` bucket with workloadAccess readWrite")
    names = [m.model for m in serving.models]
    for i, m in enumerate(serving.models):
        fit = hbm_fit_problem(f"{key}.models[{i}]", m.parameters_billions, m.weight_precision, shape)
        if fit:
            found.append(fit)
        at = f"{key}.models[{i}]"
        if not m.model.startswith(serving.cell + "/"):
            found.append(f"{at}.model = {json.dumps(m.model)}: not in the cell {serving.cell}")
        if names.count(m.model) > 1:
            found.append(f"{at}.model = {json.dumps(m.model)}: listed more than once")
        if m.replicas > pools:
            found.append(f"{at}.replicas = {m.replicas}: only {pools} model server slice(s)")
    return found


def privileged(serving: SaxmlServingConfig, min_master_version: str | None) -> bool:
    """Privileged model servers: always, never, or (auto) only on GKE before 1.28."""
    if serving.privileged != "auto":
        return serving.privileged == "always"
    return min_master_version is not None and _minor(min_master_version) < PRIVILEGED_BEFORE


def _minor(version: str) -> tuple[int, int]:
    """``"1.27.2-gke.2100"`` -> ``(1, 27)``; ``latest`` is newer than any version."""
    if version == "latest":
        return (999, 0)
    major, minor = version.split("-")[0].split(".")[:2]
    return int(major), int(minor)


def ingress(serving: SaxmlServingConfig) -> tuple[dict[str, str], list[int]]:
    """sax-http takes clients on its HTTP port."""
    return {"app": "sax-http"}, [HTTP_PORT]


def metrics(serving: SaxmlServingConfig) -> ServingMetrics:
    """Nothing to scrape: Saxml exports no Prometheus metrics.

    google/saxml@v1.1.0 has no Prometheus exporter (``prometheus`` appears in no source file of the
    tag, only as a pinned package in its requirements files); the admin's status page is HTML on ``localhost:8080`` (saxml/common/platform/cloud.go
    ``httpPort = 8080``, ``http.ListenAndServe(fmt.Sprintf("localhost:%v", httpPort), nil)``;
    saxml/admin/admin_status.go). The dashboard shows the TPU signals; the not-ready alert applies.
    """
    return ServingMetrics()


def host_network_buckets(serving: SaxmlServingConfig) -> dict[str, Access]:
    """The model servers run on the host network and read the cell's location in the state bucket."""
    return dict(MODEL_SERVER_BUCKETS)


def restart_unit_chips(serving: SaxmlServingConfig, chips: int) -> int:
    """A JobSet restart recreates every model server."""
    return chips


def build(platform: Platform, serving: SaxmlServingConfig) -> Built:
    """The JobSet install and the Sax servers, with the publication Job."""
    name, identity = platform.name, platform.identity
    jobset = platform.install(JOBSET, serving.jobset_version, ())
    pools = list(platform.slices.pools)
    workload = SaxmlServing(
        f"{name}-saxml",
        SaxmlServingArgs(
            namespace=identity.namespace_name,
            service_account=identity.service_account_name,
            shape=platform.slices.shape,
            num_slices=len(pools),
            state_bucket=platform.buckets.names["state"],
            cell=serving.cell,
            models=[SaxModel(m.model, m.model_path, m.checkpoint, m.replicas) for m in serving.models],
            images=to_settings(serving.images, SaxmlImages),
            max_restarts=serving.max_restarts,
            privileged=privileged(serving, platform.settings.cluster.min_master_version),
            exposure=Exposure(serving.http.exposure),
            source_ranges=tuple(serving.http.source_ranges),
            publish_timeout_seconds=serving.publish_timeout_seconds,
            labels=platform.k8s_labels,
            priority_class_name=SERVING_PRIORITY,
        ),
        opts=platform.options(jobset, identity.service_account, platform.tenancy, *pools),
    )
    model = serving.models[0].model if serving.models else f"{serving.cell}/<model>"

    def curl(method: str, path: str, body: dict[str, str]) -> pulumi.Output[str]:
        return workload.address.apply(
            lambda a: (
                f"curl -s -X {method} http://{a}:{HTTP_PORT}{path} -H 'Content-type: application/json' "
                f"-d '{json.dumps(body)}'"
            )
        )

    return Built(
        installs=[jobset],
        outputs={
            "saxHttpAddress": workload.address,
            "saxModels": [m.model for m in serving.models],
            "generateExample": curl("POST", "/generate", {"model": model, "query": "How many days are in a week?"}),
            "listcellExample": curl("GET", "/listcell", {"model": model}),
        },
    )


BACKEND = Backend(
    name=NAME,
    settings=SaxmlServingConfig,
    problems=problems,
    ingress=ingress,
    host_network_buckets=host_network_buckets,
    restart_unit_chips=restart_unit_chips,
    build=build,
    metrics=metrics,
    model_size=model_size,
)
