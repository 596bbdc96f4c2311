"""The stack file's ``serving`` block for backend ``saxml``, and the model size it serves."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import Field, field_validator, model_validator

from ...catalog.models import ModelSize, Precision, WeightPrecision
from ...common.settings import Cidr, Model, SingleGroup, StackFloat, StackInt, settings_model
from ...platform.controllers import JOBSET, release_validator
from .args import SaxmlImages

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
    replicas: StackInt = Field(1, ge=1, le=64, description="Model server replicas; each takes one slice.")
    parameters_billions: StackFloat = Field(gt=0, description="Parameter count in billions, for the HBM sizing check.")
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
    single_group: SingleGroup = None
    jobset_version: Annotated[str, release_validator(JOBSET)] = Field(
        JOBSET.default_version,
        description="JobSet release installed by the stack (v0.6.0 or later: failure-policy rules).",
    )
    images: SaxmlImagesConfig = Field(default_factory=SaxmlImagesConfig, description="Container images.")
    max_restarts: StackInt = Field(
        4,
        ge=0,
        le=100,
        description="JobSet failurePolicy.maxRestarts: model-server failures (crashes) before the JobSet fails for "
        "good; disruptions (drains, node upgrades, host maintenance, preemption) restart without counting.",
    )
    privileged: Literal["auto", "always", "never"] = Field(
        "auto",
        description="Privileged model servers: `auto` only when cluster.minMasterVersion is below 1.28 "
        "(GKE's TPU access needed it there), or `always`/`never`.",
    )
    http: SaxmlHttpConfig = Field(default_factory=SaxmlHttpConfig, description="Exposure of sax-http.")
    models: list[SaxModelConfig] = Field(default_factory=list, description="Models to publish (declarative).")
    publish_timeout_seconds: StackInt = Field(
        1800, ge=60, le=7200, description="How long publication waits for sax-http and the model replicas."
    )


def model_size(serving: SaxmlServingConfig) -> ModelSize | None:
    """The largest of the published models (each replica holds one copy on its slice)."""
    sizes = [ModelSize(m.parameters_billions, WeightPrecision(m.weight_precision)) for m in serving.models]
    return max(sizes, key=lambda m: m.gib, default=None)
