"""A platform stack's settings: the stack file of a cluster that model stacks build on (``sharedPlatform``).

A platform stack has no model: its stack file declares the cluster (``cluster``: its CPU pool, its network and Cloud
NAT, its control plane), the proxy-only subnet and the shared internal Gateway (``gateway``, ``sharedPlatform``), and
the cluster-wide controllers it installs and owns (``sharedPlatform.lwsVersion``, ``jobsetVersion``, and the Custom
Metrics Stackdriver Adapter the model stacks' HPAs read through, ``metricsAdapterVersion``). The program
tells a platform stack by its ``sharedPlatform`` key (:func:`platform_stack_data`); a model stack names it in
``platform.stack`` (:mod:`.platform_ref`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

from pydantic import AfterValidator, Field, StringConstraints, ValidationError, field_validator

from ..common.naming import labels_problem, namespace_problem, project_id_problem, region_problem, zone_problem
from ..common.settings import PROJECT_NAMESPACE, CreateOrExisting, K8sName, Model, declared, settings_model
from ..common.validation import raising
from ..operations.autoscaling import AutoscalingSettings
from ..platform.controllers import JOBSET, LWS, release_validator
from ..platform.existing import EXISTING_ARGS_FROM_THE_STACK, PLATFORM_EXISTING_ARGS, ExistingClusterArgs
from ..tenancy.identity import iam_member_problem
from .errors import ConfigError, describe_all
from .existing_checks import existing_cluster_problems
from .loading import stack_data
from .models import ClusterConfig, ControllerManifestsConfig, GatewayConfig, ObservabilityConfig

StackName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100)]
"""A model stack's own name, the last part of its ``<organization>/<project>/<stack>``."""

KEY = "sharedPlatform"
"""The stack file key that makes a stack a platform stack."""

IamMember = Annotated[str, AfterValidator(raising(iam_member_problem))]
"""An IAM member a role is granted to (:func:`~tpu_serving.tenancy.identity.iam_member_problem`)."""

if TYPE_CHECKING:
    PlatformClusterConfig: TypeAlias = ClusterConfig
else:
    PlatformExistingClusterConfig = settings_model(
        ExistingClusterArgs,
        "PlatformExistingClusterConfig",
        exclude=EXISTING_ARGS_FROM_THE_STACK,
        required=PLATFORM_EXISTING_ARGS,
    )

    class PlatformClusterConfig(ClusterConfig):
        __doc__ = ClusterConfig.__doc__
        existing: PlatformExistingClusterConfig | None = Field(
            None, description=ClusterConfig.model_fields["existing"].description
        )


"""A platform stack file's ``cluster``: a model stack's (:class:`~.models.ClusterConfig`), whose ``existing`` also
requires ``nodeServiceAccount`` (:data:`~tpu_serving.platform.existing.PLATFORM_EXISTING_ARGS`): the platform made no node
account on a cluster made elsewhere, and the model stacks' TPU pools run as the one the stack file names."""


class SharedPlatformConfig(Model):
    """What a platform stack shares with the model stacks on it, besides its cluster."""

    gateway_namespace: K8sName = Field(
        "tpu-serving-gateway",
        description="Namespace of the shared internal Gateway (created by the platform stack).",
    )
    gateway_name: K8sName = Field(
        "internal",
        description="Name of the shared internal Gateway; the model stacks' HTTPRoutes name it in their parentRefs.",
    )
    lws_version: Annotated[str, release_validator(LWS)] = Field(
        LWS.default_version, description="LeaderWorkerSet release the platform installs and owns."
    )
    jobset_version: Annotated[str, release_validator(JOBSET)] = Field(
        JOBSET.default_version, description="JobSet release the platform installs and owns."
    )
    metrics_adapter_version: str = declared(AutoscalingSettings, "adapter_version")
    # The adapter's grant is the platform's, as the adapter is (GKE review m2): made only with metricsAdapterInstall
    # create; the model stacks make none.
    metrics_adapter_iam: CreateOrExisting = declared(AutoscalingSettings, "adapter_iam")
    cost_shares: dict[StackName, Annotated[float, Field(gt=0, le=1)]] = Field(
        default_factory=dict,
        description="Each model stack's share of the platform's cost estimate, by its stack name (e.g. "
        "`vllm-llama33-70b-platform: 0.75`): a fraction in (0, 1], together at most 1. A model stack's `cost` output "
        "shows its share of the platform's; one not named here bears none, and its output says so (docs/platform.md, "
        "Cost).",
    )
    moved_from: str | None = Field(
        None,
        description="The self-contained stack's deployment (its `cluster.name`, the name of its "
        "TpuServingDeployment) whose cluster `pulumi state move` brought into this stack (docs/platform.md, "
        "Moving a self-contained stack): the cluster component gets that deployment as an alias parent, so the "
        "moved cluster, its CPU pool, node account and NAT keep their identity. Set `cluster.name` to the same "
        "name: GKE replaces a cluster whose name changes. Unset: nothing was moved.",
        min_length=1,
        max_length=40,
        pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
    )

    model_deployers: list[IamMember] = Field(
        default_factory=list,
        description="The IAM members who run `pulumi up` of the model stacks (e.g. `group:ml-team@example.com`, "
        "`serviceAccount:deployer@my-project.iam.gserviceaccount.com`): each is granted "
        "`roles/iam.serviceAccountUser` on the node service account (`platform.nodeServiceAccount`), which GKE "
        "requires of whoever creates a node pool running as it. Empty: the platform grants it to nobody, and its "
        "`modelDeployers` output says so.",
    )
    protect: bool = Field(
        True,
        description="Pulumi's `protect` on every resource of the platform, which its model stacks run on (deleting "
        "the controllers' custom resource definitions deletes every model's LeaderWorkerSets and JobSets; the "
        "Gateway takes every model's route). While set, the platform's `pulumi destroy` fails and deletes nothing, and "
        "so does an `up` that would replace or delete one of its resources (a CPU pool's new machine type, say: "
        "unprotect that resource first, `pulumi state unprotect <urn>`). To take the platform down: destroy its model "
        "stacks, then `pulumi state unprotect --all`, then `pulumi destroy` (docs/platform.md, Taking a platform "
        "down).",
    )
    metrics_adapter_install: CreateOrExisting = Field(
        CreateOrExisting.CREATE,
        description="`create`: the platform installs and owns the Custom Metrics Stackdriver Adapter; `existing`: "
        "the cluster runs it already (its owner's), and the platform installs none of it but still records the "
        "release its model stacks' HPAs expect.",
    )

    @field_validator("model_deployers")
    @classmethod
    def _deployers(cls, v: list[str]) -> list[str]:
        if repeated := sorted({m for m in v if v.count(m) > 1}):
            raise ValueError(f"{', '.join(repeated)}: named more than once; name each member once")
        return v

    @field_validator("cost_shares")
    @classmethod
    def _shares(cls, v: dict[str, float]) -> dict[str, float]:
        if sum(v.values()) > 1 + 1e-9:
            raise ValueError(
                f"the model stacks' shares add up to {sum(v.values()):g}: together they bear at most the platform's "
                "cost (1)"
            )
        return v

    @field_validator("gateway_namespace")
    @classmethod
    def _namespace(cls, v: str) -> str:
        if problem := namespace_problem(v):
            raise ValueError(problem)
        return v


class PlatformStackConfig(Model):
    """Everything a platform stack file declares."""

    project: str = Field(description="GCP project ID (config key `gcp:project`).")
    region: str = Field(description="GCP region of the regional cluster (config key `gcp:region`).")
    zone: str = Field(description="The CPU pool's zone, one of the region's.")
    labels: dict[str, str] = Field(default_factory=dict, description="GCP labels added to every labelled resource.")
    cluster: PlatformClusterConfig = Field(
        description="The GKE cluster the platform creates; with `existing`, a cluster made elsewhere that the platform "
        "only installs its controllers and Gateway on (it reaches it by kubeconfig or by name, and creates no cluster, "
        "node pool nor Cloud NAT)."
    )
    shared_platform: SharedPlatformConfig = Field(
        description="What the platform shares with its model stacks: the Gateway's name and namespace, and the "
        "controller releases it installs."
    )
    gateway: GatewayConfig = Field(
        default_factory=GatewayConfig,
        description="The shared Gateway's load balancer: the region's proxy-only subnet (created unless "
        "`createProxyOnlySubnet: false`) and its address.",
    )
    project_apis: CreateOrExisting = Field(
        CreateOrExisting.CREATE, description="`create`: the stack enables the Google Cloud APIs it uses."
    )
    observability: ObservabilityConfig = Field(
        default_factory=ObservabilityConfig,
        description="Who the alert policies on the platform's controllers notify (`notificationChannels`, "
        "`ticketChannels`, `unpaged`); the serving alerts are the model stacks'.",
    )
    controller_manifests: ControllerManifestsConfig = Field(
        default_factory=ControllerManifestsConfig,
        description="Where each controller's release manifest is read from; unset: the upstream release URL.",
    )

    @field_validator("project")
    @classmethod
    def _project_id(cls, v: str) -> str:
        if problem := project_id_problem(v):
            raise ValueError(problem)
        return v

    @field_validator("region")
    @classmethod
    def _region(cls, v: str) -> str:
        if problem := region_problem(v):
            raise ValueError(problem)
        return v

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        if problem := labels_problem(v):
            raise ValueError(problem)
        return v

    def problems(self) -> list[str]:
        """What the models' types cannot say: the zone in the region, and the keys a platform on an existing cluster
        (``cluster.existing``) refuses (:func:`~.existing_checks.existing_cluster_problems`)."""
        found = [f"{PROJECT_NAMESPACE}:zone = {self.zone!r}: {p}" for p in [zone_problem(self.zone, self.region)] if p]
        return found + existing_cluster_problems(self.cluster)


def is_platform_stack(values: Mapping[str, Any], namespace: str = PROJECT_NAMESPACE) -> bool:
    """Whether a flat Pulumi config map is a platform stack's (it sets ``sharedPlatform``)."""
    return any(f"{ns}:{KEY}" in values for ns in (PROJECT_NAMESPACE, namespace))


def load_platform_stack(
    values: Mapping[str, Any], source: str = "stack configuration", namespace: str = PROJECT_NAMESPACE
) -> PlatformStackConfig:
    """The platform stack's settings from a flat Pulumi config map; :class:`ConfigError` listing every problem."""
    try:
        cfg = PlatformStackConfig.model_validate(stack_data(values, source, namespace))
    except ValidationError as exc:
        raise ConfigError(describe_all(exc.errors(), PlatformStackConfig), source) from None
    if problems := cfg.problems():
        raise ConfigError(problems, source)
    return cfg


def platform_from_pulumi() -> PlatformStackConfig | None:
    """The current stack's settings when it is a platform stack (``sharedPlatform``), else None."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    values = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    if not is_platform_stack(values, pulumi.get_project()):
        return None
    return load_platform_stack(values, f"configuration of stack {pulumi.get_stack()!r}", pulumi.get_project())
