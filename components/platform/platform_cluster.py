"""``PlatformCluster``: a platform stack's cluster, as a model stack reaches it.

The model stack reads the platform's ``platform`` output (:class:`~tpu_serving.platform.platform_outputs.PlatformOutputs`)
through a ``pulumi.StackReference``, then reaches the cluster as the existing-cluster mode's GKE-by-name route does
(:class:`~tpu_serving.platform.existing.ExistingCluster`): the GCP provider's data source reads the cluster by the name,
location and project the platform exports (``gcp.container.getCluster``), and the Kubernetes provider gets a
kubeconfig built from it (:func:`~tpu_serving.platform.kubeconfig.existing_server`: the DNS-based endpoint when the cluster
admits external traffic there and has no external IP endpoint, as the platform's default does) with the cluster's
resource name as its ``clusterIdentifier``. Nothing here creates a cloud resource.

The StackReference is a resource the engine reads (pulumi 3.272.0 ``pulumi/stack_reference.py`` l.88-100: a
``pulumi:pulumi:StackReference`` read with ``id`` the stack's name; ``get_output`` l.102-113 gives None for an output
the stack lacks, which :meth:`PlatformOutputs.from_output` reports). A platform deployed with other values than the model stack's ``gcp:project``, ``gcp:region`` or
``gateway.proxyOnlyCidr`` fails the model stack's preview, saying which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from ..common.options import child_options
from ..common.settings import described
from ..common.validation import check_arguments
from .controllers import parse_version
from .existing import kubeconfig_path_problem
from .kubeconfig import existing_server, kubeconfig
from .platform_outputs import OUTPUT, PlatformOutputs

if TYPE_CHECKING:
    from .cluster import TpuCluster


@dataclass(frozen=True)
class PlatformClusterArgs:
    """Arguments of :class:`PlatformCluster`."""

    stack: str
    """The platform stack, ``<organization>/<project>/<stack>``."""
    project: str
    """The model stack's GCP project (``gcp:project``): the platform's must be the same."""
    region: str
    """The model stack's region (``gcp:region``): the platform's must be the same."""
    cluster: str
    """The platform's GKE cluster as the model stack names it (``platform.cluster``): the platform's must be it."""
    proxy_only_cidr: str | None = None
    """The proxy-only range the model stack's NetworkPolicies admit (``gateway.proxyOnlyCidr``), when it has a
    gateway: the platform's Gateway's must be the same."""
    security_group: str | None = None
    """The cluster's Google Groups for RBAC group, as the model stack records it for the checks (``cluster.securityGroup``)."""
    kubeconfig: str | None = described(
        "Path of a kubeconfig file that reaches the platform's cluster, read by the Kubernetes provider when it deploys "
        "(a leading `~/` is expanded): for a platform on a cluster reached by kubeconfig (its `cluster.existing."
        "kubeconfig`), or through Connect Gateway or a bastion. No GCP call is made for the cluster. Unset: the "
        "cluster is read with `container.getCluster` by the name, location and project the platform exports, and "
        "reached with gke-gcloud-auth-plugin.",
        default=None,
        check=kubeconfig_path_problem,
    )
    context: str | None = described(
        "With `kubeconfig`: the context to use; unset: the file's current-context.", default=None, min_length=1
    )


def platform_problems(platform: PlatformOutputs, args: PlatformClusterArgs) -> list[str]:
    """What the model stack says that the platform it reads contradicts."""
    theirs = (
        ("gcp:project", args.project, platform.project),
        ("gcp:region", args.region, platform.region),
        ("platform.cluster", args.cluster, platform.cluster_name),
        ("gateway.proxyOnlyCidr", args.proxy_only_cidr, platform.gateway.proxy_only_cidr),
    )
    return [
        f"{key} = {ours!r}, but the platform stack {args.stack} has {its!r}: a model stack is built in its platform's "
        "project, region and proxy-only range"
        for key, ours, its in theirs
        if ours is not None and ours != its
    ]


SETTING = {"lws": "sharedPlatform.lwsVersion", "jobset": "sharedPlatform.jobsetVersion"}
"""The platform stack's key of each controller release it lets its file choose."""


def release_problem(platform: PlatformOutputs, controller: str, version: str) -> str | None:
    """Why the platform cannot serve a model stack whose workloads expect ``controller`` at release ``version`` (its
    custom resources' schema and webhooks are that release's), if it cannot."""
    runs, key = platform.controller(controller), SETTING.get(controller, "sharedPlatform")
    if runs is None:
        installed = ", ".join(f"{c.name} {c.version}" for c in platform.controllers) or "none"
        return (
            f"the serving needs {controller} {version}, and the platform stack {platform.stack} installs no "
            f"{controller} (it installs: {installed}); a model stack installs no controller"
        )
    if _older(runs.version, version):
        return (
            f"the serving expects {controller} {version} or newer, but the platform stack {platform.stack} runs "
            f"{runs.version} ({key}): upgrade the platform first (an older release can lack fields the serving's "
            "objects set)"
        )
    return None


def _older(runs: str, expected: str) -> bool:
    """Whether the platform's release ``runs`` is older than the one a model stack was built against. A newer one is
    accepted, so the platform upgrades its controllers first and its model stacks follow one at a time, and a model
    stack rolled back to its previous file still deploys (SRE review: equality locked every model's ``up``, rollbacks
    included, to the platform's file). What a newer release must keep is the custom resources' API version: the
    LeaderWorkerSet CRDs of lws v0.9.0 and v0.10.0 both serve only ``leaderworkerset.x-k8s.io/v1`` (their
    ``config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml``, ``spec.versions``), JobSet v0.12.0's
    ``jobset.x-k8s.io/v1alpha2``; Kubernetes' API deprecation policy, which the controllers' APIs follow by
    convention and are not bound by, removes an API element only with a new API version (Rule #1,
    https://kubernetes.io/docs/reference/using-api/deprecation-policy/). A release tag that is not
    ``vMAJOR.MINOR.PATCH`` compares by equality only."""
    try:
        return parse_version(runs) < parse_version(expected)
    except ValueError:
        return runs != expected


def read_platform(value: object, args: PlatformClusterArgs) -> PlatformOutputs:
    """The platform output read, checked against the model stack (a ``ValueError`` listing each contradiction)."""
    platform = PlatformOutputs.from_output(value, args.stack)
    problems = platform_problems(platform, args)
    if problems:
        raise ValueError("; ".join(problems))
    return platform


def _plan_inputs(args: PlatformClusterArgs) -> dict[str, object]:
    """What the model stack takes of the platform's cluster, as the component's inputs in the plan, in the shape of
    :class:`~tpu_serving.platform.existing.ExistingCluster`'s (readers of the plan, ``make check``, read both alike); the
    platform's CPU nodes, read through the reference, are among its registered outputs (``cpuPool``)."""
    return {
        "stack": args.stack,
        "clusterName": args.cluster,
        "location": args.region,
        "readWith": "platform",
        "workloadPool": f"{args.project}.svc.id.goog",
        "securityGroup": args.security_group,
        **({"kubeconfig": args.kubeconfig, "context": args.context} if args.kubeconfig is not None else {}),
    }


class PlatformCluster(pulumi.ComponentResource):
    """The platform stack's cluster, read through a StackReference: its outputs, and a Kubernetes provider for it."""

    reference: pulumi.StackReference
    """The reference to the platform stack."""
    platform: pulumi.Output[PlatformOutputs]
    """The platform's ``platform`` output, validated."""
    provider: k8s.Provider
    """A Kubernetes provider for the cluster."""
    kubeconfig: pulumi.Output[str] | None
    """A kubeconfig using ``gke-gcloud-auth-plugin`` (holds no credential); None with a kubeconfig file
    (``PlatformClusterArgs.kubeconfig``)."""
    name: pulumi.Output[str]
    """The GKE cluster's name."""
    cluster_id: pulumi.Output[str]
    """The cluster's resource name, the ``cluster`` of the model stack's node pools."""
    node_service_account: pulumi.Output[str]
    """The node service account the model stack's pools use."""
    node_upgrades_held: pulumi.Output[bool]
    """Whether the platform's cluster holds GKE's node upgrades back (its output's ``nodeUpgradesHeld``)."""

    def __init__(self, name: str, args: PlatformClusterArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"PlatformCluster {name!r}", args, PlatformClusterArgs)
        super().__init__("tpu-serving:index:PlatformCluster", name, _plan_inputs(args), opts)
        child = child_options(self, opts)
        self.reference = pulumi.StackReference(f"{name}-platform", stack_name=args.stack, opts=child)
        self.platform = self.reference.get_output(OUTPUT).apply(lambda v: read_platform(v, args))
        self.name = self.platform.apply(lambda p: p.cluster_name)
        self.cluster_id = self.platform.apply(lambda p: p.control_plane.cluster_identifier)
        self.node_service_account = self.platform.apply(lambda p: p.node_service_account)
        self.workload_pool = self.platform.apply(lambda p: p.workload_pool)
        self.node_upgrades_held = self.platform.apply(lambda p: p.node_upgrades_held)
        self.kubeconfig = None if args.kubeconfig is not None else self._read_cluster()
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig if self.kubeconfig is not None else args.kubeconfig,
            context=args.context,
            # the platform's cluster, however it is reached: a change of the route replaces nothing
            cluster_identifier=self.cluster_id,
            enable_server_side_apply=True,
            opts=child,
        )
        self.register_outputs(
            {
                "clusterName": self.name,
                "readWith": "platform",
                "cpuPool": self.platform.apply(
                    lambda p: {
                        "machineType": p.cpu_pool.machine_type,
                        "minNodes": p.cpu_pool.min_nodes,
                        "maxNodes": p.cpu_pool.max_nodes,
                    }
                ),
            }
        )

    def _read_cluster(self) -> pulumi.Output[str]:
        """The platform's cluster read with ``gcp.container.getCluster`` by the name, location and project its output
        gives, and a kubeconfig built from it."""
        from pulumi_gcp import container

        found = container.get_cluster_output(
            name=self.name,
            location=self.platform.apply(lambda p: p.cluster_location),
            project=self.platform.apply(lambda p: p.project),
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        return pulumi.Output.all(self.platform, found).apply(
            lambda both: kubeconfig(
                f"gke_{both[0].project}_{both[0].cluster_location}_{both[0].cluster_name}", *existing_server(both[1])
            )
        )

    def expects(self, controller: str, version: str) -> pulumi.Output[str]:
        """What a model stack's workloads expect of a platform controller, once the platform's output says it runs
        that release; the output fails with :func:`release_problem`'s reason when it does not."""

        def agreed(platform: PlatformOutputs) -> str:
            if problem := release_problem(platform, controller, version):
                raise ValueError(problem)
            runs = platform.controller(controller)
            release = runs.version if runs is not None else version
            return f"the platform stack {platform.stack} runs {controller} {release}; the serving expects {version} or newer"

        return self.platform.apply(agreed)


def cluster_id(cluster: TpuCluster | PlatformCluster) -> pulumi.Input[str]:
    """The ``cluster`` of a node pool: the created cluster's ID, or the platform's cluster's resource name."""
    return cluster.cluster_id if isinstance(cluster, PlatformCluster) else cluster.cluster.id


def shared_account(cluster: TpuCluster | PlatformCluster) -> pulumi.Input[str] | None:
    """The node account the TPU pools run as when they do not get their own: the platform's (None: their own)."""
    return cluster.node_service_account if isinstance(cluster, PlatformCluster) else None
