"""The stack file's ``serving`` block for backend ``pathways-job``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import Field

from ...catalog.images import ImageRef
from ...catalog.pathways import DEFAULT_PATHWAYS_VERSION
from ...common.settings import K8sName, Model, StackInt, settings_model
from ...platform.controllers import JOBSET, PATHWAYS_JOB, release_validator
from .args import HeadPoolSettings

NAME = "pathways-job"

# mypy cannot see a model made at runtime: to it, each generated config model is the
# dataclass it mirrors (the same field names and types, which is all the code reads).
if TYPE_CHECKING:
    HeadPoolConfig: TypeAlias = HeadPoolSettings
else:
    HeadPoolConfig = settings_model(HeadPoolSettings, "HeadPoolConfig")


class UserContainerConfig(Model):
    """The user's batch container."""

    image: ImageRef = Field(description="Container image.")
    command: list[str] = Field(default_factory=list, description="Command (entrypoint override).")
    args: list[str] = Field(default_factory=list, description="Arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables.")
    cpu: str = Field("1", pattern=r"^\d+(\.\d+)?m?$", description="CPU request, e.g. `1` or `500m`.")
    memory: str = Field("4Gi", pattern=r"^\d+(Ki|Mi|Gi|Ti)?$", description="Memory request and limit, e.g. `4Gi`.")


class CustomComponentConfig(Model):
    """Override of one Pathways component."""

    component_type: Literal["proxy_server", "pathways_server", "worker", "colocated_python_sidecar"] = Field(
        description="Which component."
    )
    image: ImageRef | None = Field(None, description="Image replacing the default.")
    flags: list[str] = Field(default_factory=list, description="Extra flags, `--name=value`.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")


LIMIT_RANGE_DEFAULT_CPU = 0.25
LIMIT_RANGE_DEFAULT_MEMORY = 512 * 2**20
"""The namespace's default container requests (the Tenancy LimitRange: 250m, 512Mi)."""

JOBSET_FOR_PATHWAYS_JOB = "v0.8.0"
"""Oldest JobSet release the PathwaysJob controller works with."""


INTERACTIVE_MAX_RESTARTS = 3
"""``maxRestarts`` of an interactive PathwaysJob unless the stack sets it. The v0.1.4 controller gives the JobSet it
makes ``FailurePolicy{MaxRestarts: pw.Spec.MaxRestarts}`` and no rule (google/pathways-job v0.1.4
internal/controller/pathwaysjob_controller.go l.259-261), and the workers' Jobs ``backoffLimit`` 0 unless slices are
elastic (l.712-715), so each disruption of a VM (drain, node upgrade, TPU host maintenance, repair) fails a Job and
spends one restart of the whole JobSet; at 0 the first one fails the job for good. Three bounds a crash loop (each
restart reloads every slice) while riding out a few disruptions; the count only grows over the JobSet's life."""


class PathwaysJobConfig(Model):
    """A Pathways batch or interactive workload through the PathwaysJob API (seed 003)."""

    backend: Literal["pathways-job"] = Field(description="Selects this backend.")
    workload: Literal["batch", "interactive"] = Field(
        description="`batch`: runs `container` to completion; `interactive`: a JAX client connects to the IFRT proxy."
    )
    name: K8sName = Field("pathways", description="PathwaysJob name.")
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries the workers run on.")
    pathways_job_version: Annotated[str, release_validator(PATHWAYS_JOB)] = Field(
        PATHWAYS_JOB.default_version, description="PathwaysJob controller release installed by the stack."
    )
    jobset_version: Annotated[str, release_validator(JOBSET)] = Field(
        JOBSET.default_version, description="JobSet release installed by the stack (v0.8.0 or later here)."
    )
    pathways_version: str = Field(
        DEFAULT_PATHWAYS_VERSION,
        pattern=r"^jax-\d+\.\d+\.\d+$",
        description="Pathways release (the server and proxy image tag), e.g. `jax-0.9.0`; the batch container "
        "gets the matching JAX version in `PATHWAYS_JAX_VERSION`.",
    )
    deployment_mode: Literal["default", "colocate_head_with_workers"] = Field(
        "default",
        description="`default`: head (RM, proxy) on a CPU node; `colocate_head_with_workers`: beside a TPU worker.",
    )
    max_restarts: StackInt | None = Field(
        None,
        ge=0,
        le=1000,
        description="JobSet restarts before the job fails; a drain, node upgrade, host maintenance or repair of any "
        f"of its VMs spends one. Unset: 0 for `batch` (a disruption fails it), {INTERACTIVE_MAX_RESTARTS} for "
        "`interactive` (the proxy comes back; clients reconnect).",
    )
    max_slice_restarts: StackInt = Field(
        1,
        ge=0,
        le=1000,
        description="Restarts of a single slice; only with `elasticSlices` (the PathwaysJob controller reads it "
        "for elastic slices only).",
    )
    elastic_slices: StackInt | None = Field(
        None, ge=1, description="Slices that may be missing at once; unset disables."
    )
    termination_grace_period_seconds: StackInt | None = Field(
        None, ge=0, le=86400, description="Grace period of worker pods."
    )
    priority_class_name: K8sName | None = Field(None, description="Priority class of the worker pods.")
    container: UserContainerConfig | None = Field(None, description="The batch job's container (batch only).")
    custom_components: list[CustomComponentConfig] = Field(
        default_factory=list, description="Component overrides (image, flags, env)."
    )
    head_pool: HeadPoolConfig = Field(
        default_factory=HeadPoolConfig,
        description="The CPU node pool of the Pathways head in deploymentMode `default` (24 CPU, 132 GB, host network).",
    )

    def restarts(self) -> int:
        """``max_restarts``, or its default for the workload (:data:`INTERACTIVE_MAX_RESTARTS`)."""
        if self.max_restarts is not None:
            return self.max_restarts
        return INTERACTIVE_MAX_RESTARTS if self.workload == "interactive" else 0
