"""``Buckets``: the stack's GCS buckets, private by construction.

Uniform bucket-level access and enforced public access prevention on every bucket; the
checkpoint bucket is protected from deletion (Pulumi ``protect`` and no force-destroy),
because re-creating a 405B checkpoint takes hours.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
from pulumi_gcp import storage

from ..common.naming import project_problems
from ..common.options import child_options
from ..common.settings import described
from ..common.validation import Choice, check_arguments


def is_object_path(path: str) -> bool:
    """Whether ``path`` names objects inside a bucket: relative (no ``gs://``, no leading ``/``), no ``..``."""
    return bool(path) and not path.startswith(("gs://", "/")) and ".." not in path.split("/")


class Purpose(Choice):
    """What a bucket holds."""

    CHECKPOINTS = "checkpoints"
    STATE = "state"
    SCRATCH = "scratch"


PROTECTED_PURPOSES: frozenset[str] = frozenset({"checkpoints"})
"""Bucket purposes whose buckets Pulumi refuses to delete."""


class StorageClass(Choice):
    """Default storage class of a bucket's new objects."""

    STANDARD = "STANDARD"
    NEARLINE = "NEARLINE"
    COLDLINE = "COLDLINE"
    ARCHIVE = "ARCHIVE"


@dataclass(frozen=True)
class BucketSpec:
    """One bucket of the stack."""

    purpose: Purpose
    """What it holds; also its key in :attr:`Buckets.buckets`."""
    name: str
    """Globally unique bucket name."""
    location: str
    """Bucket location (region or multi-region)."""
    storage_class: StorageClass = described("Default storage class of new objects.", default=StorageClass.STANDARD)
    versioning: bool = described("Keep non-current object versions.", default=False)
    ttl_days: int | None = None
    """Delete objects older than this many days."""
    existing: bool = described(
        "The bucket `name` exists already: nothing creates, changes or deletes it (its own settings stay as they "
        "are; the stack only grants roles on it, where it grants any).",
        default=False,
    )


@dataclass(frozen=True)
class BucketsArgs:
    """Arguments of :class:`Buckets`."""

    project: str
    """GCP project ID."""
    buckets: Sequence[BucketSpec]
    """The buckets."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """GCP labels on every bucket."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.common.validation`)."""
        return project_problems(self.project)


def bucket_args(project: str, spec: BucketSpec, labels: Mapping[str, str]) -> storage.BucketArgs:
    """Arguments of one ``gcp.storage.Bucket``."""
    return storage.BucketArgs(
        name=spec.name,
        project=project,
        location=spec.location.upper(),
        storage_class=spec.storage_class,
        uniform_bucket_level_access=True,
        public_access_prevention="enforced",
        force_destroy=False,
        versioning={"enabled": spec.versioning},
        lifecycle_rules=(
            [{"action": {"type": "Delete"}, "condition": {"age": spec.ttl_days}}] if spec.ttl_days else None
        ),
        labels={**labels, "purpose": spec.purpose},
    )


class Buckets(pulumi.ComponentResource):
    """The stack's GCS buckets, keyed by purpose: those it creates, and those that exist already (``existing``),
    which it never creates, changes or deletes. The existing ones' names are the component's inputs
    (``existingBucketNames``), so the policy pack's ``iam-storage-on-stack-buckets`` accepts grants on them."""

    buckets: dict[str, storage.Bucket]
    """Bucket resources by purpose (``checkpoints``, ``state``, ``scratch``): the created ones."""
    names: dict[str, str]
    """Bucket names by purpose (known at preview time), created and existing."""

    def __init__(self, name: str, args: BucketsArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"Buckets {name!r}", args, BucketsArgs)
        existing = [b.name for b in args.buckets if b.existing]
        props = {"existingBucketNames": existing} if existing else None
        super().__init__("tpu-serving:index:Buckets", name, props, opts)
        self.names = {b.purpose: b.name for b in args.buckets}
        self.buckets = {
            b.purpose: storage.Bucket(
                f"{name}-{b.purpose}",
                bucket_args(args.project, b, args.labels),
                opts=pulumi.ResourceOptions.merge(
                    child_options(self, opts), pulumi.ResourceOptions(protect=b.purpose in PROTECTED_PURPOSES)
                ),
            )
            for b in args.buckets
            if not b.existing
        }
        self.register_outputs({"names": self.names})

    def depends_on(self, purpose: str) -> list[pulumi.Resource]:
        """What a user of bucket ``purpose`` waits for: the bucket, when the stack creates it (none when it exists)."""
        return [self.buckets[purpose]] if purpose in self.buckets else []


BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$")
"""A bucket name: 3 to 63 lower-case letters, digits, dashes, underscores and dots, starting and ending with a
letter or digit (https://cloud.google.com/storage/docs/buckets#naming; dotted names up to 222 are left out)."""


def bucket_name_problem(name: str) -> str:
    """Why ``name`` is not a bucket name, or ``""``."""
    if BUCKET_NAME.match(name):
        return ""
    return (
        "is not a bucket name: 3 to 63 lower-case letters, digits, '-', '_' and '.', starting and ending with a "
        "letter or digit"
    )


@dataclass(frozen=True)
class SharedBucket:
    """An existing bucket the stack reads but does not own, e.g. a team's shared weights bucket."""

    name: str = described("Name of the existing bucket.", check=bucket_name_problem)
    key: str = described(
        "Short name for the grants' resource names, e.g. `weights`.", pattern=r"^[a-z][a-z0-9-]{0,19}$"
    )


@dataclass(frozen=True)
class SharedBucketsArgs:
    """Arguments of :class:`SharedBuckets`."""

    buckets: Sequence[SharedBucket] = described("The existing buckets.", min_length=1)

    def problems(self) -> list[str]:
        """Each key and each name once."""
        found = []
        for attr in ("key", "name"):
            values = [getattr(b, attr) for b in self.buckets]
            found += [f"buckets: {attr} {v!r} is declared twice" for v in sorted(set(values)) if values.count(v) > 1]
        return found


class SharedBuckets(pulumi.ComponentResource):
    """Existing buckets the stack reads: declared, never created, changed or deleted by the stack.

    Their names are the component's inputs (``bucketNames``), so the policy pack's
    ``iam-storage-on-stack-buckets`` accepts bucket-scoped grants on them, and on nothing else outside the
    stack. Grant them with :class:`~tpu_serving.platform.node_identity.BucketGrant` (read) on an identity.
    """

    names: dict[str, str]
    """Bucket names by key."""

    def __init__(self, name: str, args: SharedBucketsArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"SharedBuckets {name!r}", args, SharedBucketsArgs)
        names = [b.name for b in args.buckets]
        super().__init__("tpu-serving:index:SharedBuckets", name, {"bucketNames": names}, opts)
        self.names = {b.key: b.name for b in args.buckets}
        self.register_outputs({"bucketNames": names})
