"""``WorkloadIdentity``: a Kubernetes service account that acts as a GCP service account.

Storage roles are granted on the stack's buckets only (``objectViewer`` or
``objectUser``), never project-wide. With an existing GCP service account
(:attr:`WorkloadIdentityArgs.existing_gcp_service_account`) only the Kubernetes side is created: the
account, its Workload Identity binding and its bucket roles must exist already (:func:`required_grants`).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
from pulumi_gcp import serviceaccount, storage

from ..common.naming import check_dns_name, namespace_problem, project_id_problem, service_account_id_problem
from ..common.options import child_options
from ..common.settings import described
from ..common.validation import check_arguments
from ..platform.node_identity import BUCKET_ROLES, BucketGrant, bucket_grants

GSA_ANNOTATION = "iam.gke.io/gcp-service-account"
"""The KSA annotation that names the GCP service account it impersonates."""


SERVICE_ACCOUNT_EMAIL = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z0-9.-]+\.gserviceaccount\.com$")
"""A GCP service account's email: ``<account id>@<project>.iam.gserviceaccount.com`` (a user-managed account), or
another ``*.gserviceaccount.com`` domain (https://cloud.google.com/iam/docs/service-account-types)."""


def service_account_email_problem(email: str | None) -> str:
    """Why ``email`` is not a GCP service account's email, or ``""``."""
    if email is None or SERVICE_ACCOUNT_EMAIL.match(email):
        return ""
    return "must be a GCP service account's email, <account id>@<project>.iam.gserviceaccount.com"


IAM_MEMBER = re.compile(
    r"^(?:(?:user|group|serviceAccount):[^@\s:]+@[^@\s:]+\.[^@\s:]+"
    r"|domain:[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+"
    r"|(?:principal|principalSet)://\S+)$"
)
"""An IAM policy member who can be granted a role on a service account: ``user:<email>``, ``group:<email>``,
``serviceAccount:<email>``, ``domain:<domain>``, or a workload or workforce identity federation identifier,
``principal://...`` or ``principalSet://...`` (IAM, "Principal identifiers",
https://cloud.google.com/iam/docs/principal-identifiers, read 2026-12-03). ``allUsers`` and
``allAuthenticatedUsers`` are refused: anyone would act as the account."""


def iam_member_problem(member: str) -> str:
    """Why ``member`` is not an IAM member a role may be granted to (:data:`IAM_MEMBER`), or ``""``."""
    if IAM_MEMBER.match(member):
        return ""
    return (
        "must be an IAM member: user:<email>, group:<email>, serviceAccount:<email>, domain:<domain>, "
        "principal://... or principalSet://..."
    )


def optional_service_account_id_problem(account_id: str | None) -> str:
    """:func:`~tpu_serving.common.naming.service_account_id_problem`, when an id is given."""
    return "" if account_id is None else service_account_id_problem(account_id)


WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"


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
    gcp_service_account_id: str | None = described(
        "``account_id`` of the GCP service account created here (6 to 30 characters, a DNS-1123 label); None with "
        "an existing account.",
        default=None,
        check=optional_service_account_id_problem,
    )
    bucket_grants: Sequence[BucketGrant] = ()
    """Bucket-scoped storage access: granted to a created account; an existing account must hold it already."""
    create_namespace: bool = True
    """Create the namespace (turn off when it is managed elsewhere)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Kubernetes labels on the namespace and service account."""
    workload_pool: pulumi.Input[str] | None = None
    """The cluster's workload pool, as its output (``TpuCluster.cluster.workload_identity_config.workload_pool``):
    the Workload Identity binding then waits for the cluster, which creates the project's pool; IAM refuses the
    binding before (400 "Identity Pool does not exist", terraform-google-kubernetes-engine#916). None: the
    pool ``<project>.svc.id.goog`` exists already."""
    existing_gcp_service_account: str | None = described(
        "Email of an existing GCP service account the workloads act as: no account, no Workload Identity binding "
        "and no bucket roles are created; it must already hold them (`required_grants`).",
        default=None,
        check=service_account_email_problem,
    )

    def problems(self) -> list[str]:
        """One GCP service account: created (``gcp_service_account_id``) or existing (its email)."""
        if (self.gcp_service_account_id is None) == (self.existing_gcp_service_account is None):
            return [
                "give either gcp_service_account_id (an account created here) or existing_gcp_service_account "
                "(an existing account's email), not both or neither"
            ]
        return []

    @property
    def member(self) -> str:
        """The Workload Identity principal of the Kubernetes service account (with the project's pool)."""
        pool = self.workload_pool if isinstance(self.workload_pool, str) else f"{self.project}.svc.id.goog"
        return f"serviceAccount:{pool}[{self.namespace}/{self.kubernetes_service_account}]"


def required_grants(args: WorkloadIdentityArgs) -> list[str]:
    """What an existing account must already hold for the workloads: the Workload Identity binding of the Kubernetes
    service account and each bucket role, one line each."""
    account = args.existing_gcp_service_account or "the account"
    return [f"{WORKLOAD_IDENTITY_USER} on {account} for {args.member}"] + [
        f"{BUCKET_ROLES[g.access]} on gs://{g.bucket}" for g in args.bucket_grants if isinstance(g.bucket, str)
    ]


def existing_account(args: WorkloadIdentityArgs) -> dict[str, object] | None:
    """An existing account as the component's inputs in the plan (its email, the Workload Identity member it must
    admit, the bucket roles it must hold), for readers of the plan; None when the account is created here."""
    if args.existing_gcp_service_account is None:
        return None
    return {
        "existingGcpServiceAccount": args.existing_gcp_service_account,
        "member": args.member,
        "bucketRoles": [{"bucket": g.bucket, "role": BUCKET_ROLES[g.access]} for g in args.bucket_grants],
    }


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
    listed bucket only. With ``existing_gcp_service_account`` none of the three is created: the
    Kubernetes service account names the existing account, which must hold them already
    (:attr:`required_grants`). Pass the cluster's Kubernetes provider in ``opts.providers``.
    """

    gcp_service_account: serviceaccount.Account | None
    """The GCP service account, when created here."""
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
    workload_identity_user: serviceaccount.IAMMember | None
    """The Workload Identity binding, when the account is created here."""
    bucket_grants: list[storage.BucketIAMMember]
    """The account's bucket roles, when it is created here."""
    required_grants: list[str]
    """With an existing account: what it must already hold (its Workload Identity binding, its bucket roles);
    empty when the account is created here."""

    def __init__(self, name: str, args: WorkloadIdentityArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"WorkloadIdentity {name!r}", args, WorkloadIdentityArgs)
        super().__init__("tpu-serving:index:WorkloadIdentity", name, existing_account(args), opts)
        child = child_options(self, opts)
        self.namespace_name = args.namespace
        self.service_account_name = args.kubernetes_service_account
        self.gcp_service_account, self.workload_identity_user, self.bucket_grants = None, None, []
        self.required_grants = []
        if args.existing_gcp_service_account is not None:
            self.email = pulumi.Output.from_input(args.existing_gcp_service_account)
            self.required_grants = required_grants(args)
        else:
            self._create_account(name, args, child)
        self.access: list[pulumi.Resource] = [
            *([self.workload_identity_user] if self.workload_identity_user else []),
            *self.bucket_grants,
        ]
        """The grants a pod of the service account needs when it starts: workloads list them in ``depends_on``,
        or a first ``pulumi up`` can start a pod before its identity may read the buckets (a model server
        that reads ``gs://`` at start then fails, and its LeaderWorkerSet group is recreated). None with an
        existing account, which holds them already."""
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

    def _create_account(self, name: str, args: WorkloadIdentityArgs, child: pulumi.ResourceOptions) -> None:
        """The GCP service account, its Workload Identity binding and its bucket roles."""
        account = serviceaccount.Account(
            f"{name}-gsa",
            project=args.project,
            account_id=args.gcp_service_account_id,
            display_name=f"Workloads of {args.namespace}/{args.kubernetes_service_account}",
            opts=child,
        )
        self.gcp_service_account, self.email = account, account.email
        self.workload_identity_user = serviceaccount.IAMMember(
            f"{name}-wi-user",
            service_account_id=account.name,
            role=WORKLOAD_IDENTITY_USER,
            member=pulumi.Output.from_input(args.workload_pool).apply(
                lambda pool: (
                    f"serviceAccount:{pool or f'{args.project}.svc.id.goog'}"
                    f"[{args.namespace}/{args.kubernetes_service_account}]"
                )
            ),
            opts=child,
        )
        self.bucket_grants = bucket_grants(name, account.member, args.bucket_grants, child)
