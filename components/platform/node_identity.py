"""Node service accounts: one per node pool role, least privilege, bucket access only where needed.

On GKE, pods on the host network do not get workload identity: they act as the node's
service account ("Workload Identity Federation for GKE can't be used with hostNetwork
Pods", https://cloud.google.com/kubernetes-engine/docs/concepts/workload-identity#limitations).
The PathwaysJob controller puts the Pathways head and workers on the host network, and the
Saxml model servers run there as in the Saxml guide, so the nodes those pods run on need
exactly the bucket roles those pods use. Every pool therefore gets its own service account
with the project roles every GKE node needs (logs, metrics, image pulls) plus bucket-scoped
roles for its host-network pods, and nothing project-wide beyond that.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
from pulumi_gcp import projects, serviceaccount, storage

from ..common.validation import Choice

NODE_SERVICE_ACCOUNT_EMAIL = re.compile(
    r"^(?:[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam"
    r"|[0-9]{1,20}-compute@developer)\.gserviceaccount\.com$"
)
"""The email of an account node pools can run as: a user-managed service account's,
``<account id>@<project id>.iam.gserviceaccount.com`` (an account id of 6 to 30 lower-case letters, digits and hyphens,
a letter first; a project id of the same form), or the Compute Engine default service account's,
``<project number>-compute@developer.gserviceaccount.com``, which GKE's nodes run as when none is named (IAM,
"Service accounts overview", https://cloud.google.com/iam/docs/service-account-overview, and "Service account types",
https://cloud.google.com/iam/docs/service-account-types, read 2026-12-03)."""


def node_service_account_problem(email: str | None) -> str:
    """Why ``email`` is not the email of an account node pools can run as (:data:`NODE_SERVICE_ACCOUNT_EMAIL`), or
    ``""``."""
    if email is None or NODE_SERVICE_ACCOUNT_EMAIL.match(email):
        return ""
    return (
        "must be a service account's email: <account id>@<project id>.iam.gserviceaccount.com (a user-managed "
        "account) or <project number>-compute@developer.gserviceaccount.com (the Compute Engine default account)"
    )


NODE_ROLES: tuple[str, ...] = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/artifactregistry.reader",
)
"""Project roles of every node service account: logs, metrics, image pulls. Nothing else
(GKE "Use least privilege IAM service accounts",
https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa)."""

BUCKET_ROLES: dict[str, str] = {
    "read": "roles/storage.objectViewer",
    "readWrite": "roles/storage.objectUser",
}
"""Bucket-scoped roles by access level."""


class Access(Choice):
    """Access of an identity to a bucket's objects."""

    READ = "read"
    READ_WRITE = "readWrite"


@dataclass(frozen=True)
class BucketGrant:
    """Access of an identity to one bucket."""

    key: str
    """Short name for the grant's resource name (e.g. the bucket's purpose)."""
    bucket: pulumi.Input[str]
    """Bucket name (wiring)."""
    access: Access
    """``read`` or ``readWrite``."""


def role_suffix(role: str) -> str:
    """``roles/logging.logWriter`` -> ``logging-logwriter`` (for resource names)."""
    return role.split("/")[1].replace(".", "-").lower()


def bucket_grants(
    name: str, member: pulumi.Input[str], grants: Sequence[BucketGrant], opts: pulumi.ResourceOptions
) -> list[storage.BucketIAMMember]:
    """One ``BucketIAMMember`` per grant, named ``<name>-<key>-<access>``."""
    return [
        storage.BucketIAMMember(
            f"{name}-{g.key}-{g.access.lower()}", bucket=g.bucket, role=BUCKET_ROLES[g.access], member=member, opts=opts
        )
        for g in grants
    ]


def node_service_account(
    name: str,
    *,
    project: str,
    account_id: str,
    display_name: str,
    grants: Sequence[BucketGrant],
    opts: pulumi.ResourceOptions,
) -> tuple[serviceaccount.Account, list[pulumi.Resource]]:
    """A node service account with :data:`NODE_ROLES` and ``grants``; returns it and its role bindings."""
    account = serviceaccount.Account(name, project=project, account_id=account_id, display_name=display_name, opts=opts)
    roles: list[pulumi.Resource] = [
        projects.IAMMember(f"{name}-{role_suffix(role)}", project=project, role=role, member=account.member, opts=opts)
        for role in NODE_ROLES
    ]
    roles += bucket_grants(name, account.member, grants, opts)
    return account, roles
