"""``WorkloadIdentity``: a Kubernetes service account that acts as a GCP service account.

Storage roles are granted on the stack's buckets only (``objectViewer`` or
``objectUser``), never project-wide.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
from pulumi_gcp import serviceaccount

from .naming import check_dns_name, namespace_problem, project_id_problem, service_account_id_problem
from .node_identity import BucketGrant, bucket_grants
from .options import child_options
from .settings import described
from .validation import check_arguments

GSA_ANNOTATION = "iam.gke.io/gcp-service-account"
"""The KSA annotation that names the GCP service account it impersonates."""


@dataclass(frozen=True)
class WorkloadIdentityArgs:
    """Arguments of :class:`WorkloadIdentity`."""

    project: str = described(
        "GCP project ID (its `<project>.svc.id.goog` is the workload pool).", check=project_id_problem
    )
    """GCP project ID (its ``<project>.svc.id.goog`` is the workload pool)."""
    namespace: str = described(
        "Kubernetes namespace of the workloads (a DNS-1123 label; not kube-system or another namespace Kubernetes "
        "or GKE reserves).",
        check=namespace_problem,
    )
    kubernetes_service_account: str = described(
        "Kubernetes service account name (a DNS-1123 label).", check=check_dns_name
    )
    gcp_service_account_id: str = described(
        "``account_id`` of the GCP service account (6 to 30 characters, a DNS-1123 label).",
        check=service_account_id_problem,
    )
    bucket_grants: Sequence[BucketGrant] = ()
    """Bucket-scoped storage access."""
    create_namespace: bool = True
    """Create the namespace (turn off when it is managed elsewhere)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Kubernetes labels on the namespace and service account."""
    workload_pool: pulumi.Input[str] | None = None
    """The cluster's workload pool, as its output (``TpuCluster.cluster.workload_identity_config.workload_pool``):
    the Workload Identity binding then waits for the cluster, which creates the project's pool; IAM refuses the
    binding before (400 "Identity Pool does not exist", terraform-google-kubernetes-engine#916). None: the
    pool ``<project>.svc.id.goog`` exists already."""


def service_account_args(
    args: WorkloadIdentityArgs, gsa_email: pulumi.Input[str]
) -> k8s.core.v1.ServiceAccountInitArgs:
    """The annotated Kubernetes service account."""
    return k8s.core.v1.ServiceAccountInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=args.kubernetes_service_account,
            namespace=args.namespace,
            labels=dict(args.labels),
            annotations={GSA_ANNOTATION: gsa_email},
        )
    )


class WorkloadIdentity(pulumi.ComponentResource):
    """A GCP service account, a Kubernetes namespace and service account bound to it.

    The Kubernetes service account carries ``iam.gke.io/gcp-service-account``; the GCP
    service account grants ``roles/iam.workloadIdentityUser`` to
    ``serviceAccount:<project>.svc.id.goog[<ns>/<ksa>]``; storage roles are granted on each
    listed bucket only. Pass the cluster's Kubernetes provider in ``opts.providers``.
    """

    gcp_service_account: serviceaccount.Account
    """The GCP service account."""
    namespace: k8s.core.v1.Namespace | None
    """The namespace, when created here."""
    service_account: k8s.core.v1.ServiceAccount
    """The Kubernetes service account."""
    namespace_name: str
    """Namespace name (known at preview time)."""
    service_account_name: str
    """Kubernetes service account name (known at preview time)."""
    email: pulumi.Output[str]
    """Email of the GCP service account."""

    def __init__(self, name: str, args: WorkloadIdentityArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments("WorkloadIdentity", args, WorkloadIdentityArgs)
        super().__init__("tpu-serving:index:WorkloadIdentity", name, None, opts)
        child = child_options(self, opts)
        self.namespace_name = args.namespace
        self.service_account_name = args.kubernetes_service_account

        self.gcp_service_account = serviceaccount.Account(
            f"{name}-gsa",
            project=args.project,
            account_id=args.gcp_service_account_id,
            display_name=f"Workloads of {args.namespace}/{args.kubernetes_service_account}",
            opts=child,
        )
        self.email = self.gcp_service_account.email
        self.workload_identity_user = serviceaccount.IAMMember(
            f"{name}-wi-user",
            service_account_id=self.gcp_service_account.name,
            role="roles/iam.workloadIdentityUser",
            member=pulumi.Output.from_input(args.workload_pool).apply(
                lambda pool: (
                    f"serviceAccount:{pool or f'{args.project}.svc.id.goog'}"
                    f"[{args.namespace}/{args.kubernetes_service_account}]"
                )
            ),
            opts=child,
        )
        self.bucket_grants = bucket_grants(name, self.gcp_service_account.member, args.bucket_grants, child)
        self.access: list[pulumi.Resource] = [self.workload_identity_user, *self.bucket_grants]
        """The grants a pod of the service account needs when it starts: workloads list them in ``depends_on``,
        or a first ``pulumi up`` can start a pod before its identity may read the buckets (a model server
        that reads ``gs://`` at start then fails, and its LeaderWorkerSet group is recreated)."""
        self.namespace = None
        ksa_opts = child
        if args.create_namespace:
            self.namespace = k8s.core.v1.Namespace(
                f"{name}-ns",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=args.namespace, labels=dict(args.labels)),
                opts=child,
            )
            ksa_opts = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.namespace]))
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-ksa", service_account_args(args, self.email), opts=ksa_opts
        )
        self.register_outputs(
            {"email": self.email, "namespace": args.namespace, "serviceAccount": args.kubernetes_service_account}
        )
