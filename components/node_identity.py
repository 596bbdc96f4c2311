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

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
from pulumi_gcp import projects, serviceaccount, storage

from .validation import Choice

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
