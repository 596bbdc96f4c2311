"""Where the stack's images are pulled from: Artifact Registry remote repositories (pull-through caches) in front of
Docker Hub and ghcr.io, instead of anonymous pulls through the region's Cloud NAT.

Why (GKE review M2): Docker Hub allows unauthenticated pulls at 10 per hour per IPv4 address
(https://docs.docker.com/docker-hub/usage/, the "Unauthenticated users" row: "10 per IPv4 address or IPv6 /64
subnet"), and every private node of a region leaves through the same NAT addresses, so a surge rollout or two slice
recreations of a 16-VM stack in one hour use it up; GKE image streaming applies to Artifact Registry images only
(https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, "Requirements"). A remote repository caches
an upstream's images on first pull and serves the cached copy after ("The first time that you request a version of a
package, Artifact Registry downloads and caches the package in the remote repository. The next time you request the
same package version, Artifact Registry serves the cached copy",
https://cloud.google.com/artifact-registry/docs/repositories/remote-repo), and private nodes reach Artifact Registry
through Private Google Access, not the NAT (:func:`tpu_serving.platform.cloud_nat.cloud_nat`).

Upstreams a remote repository takes: "Docker Hub" and "GitHub Container Registry (ghcr.io)" among the external sources
(same page). Resource fields: pulumi-gcp 10.2.0 ``artifactregistry/repository.py`` (``format``, ``mode``:
``STANDARD_REPOSITORY``, ``VIRTUAL_REPOSITORY``, ``REMOTE_REPOSITORY``; its "Artifact Registry Repository Remote"
example: ``format="DOCKER"``, ``remote_repository_config.docker_repository.public_repository="DOCKER_HUB"``) and
``artifactregistry/_inputs.py`` (``RepositoryRemoteRepositoryConfigDockerRepositoryArgs.public_repository``: "Possible
values are: `DOCKER_HUB`", l.979-991; ``custom_repository`` is "[Deprecated, please use commonRepository instead]",
l.988; ``RepositoryRemoteRepositoryConfigCommonRepositoryArgs.uri``: "URI to the registry, e.g.
`"https://registry-1.docker.io"`", l.943-951): ghcr.io is therefore a ``common_repository`` with ``uri``
``https://ghcr.io``.

An image's path in a repository: ``LOCATION-docker.pkg.dev/PROJECT-ID/REPOSITORY/IMAGE:TAG`` or ``...@IMAGE-DIGEST``
(https://cloud.google.com/artifact-registry/docs/docker/names, "Container image names"); ``IMAGE`` is the upstream's
path, and an official Docker Hub image's path is ``library/<name>`` (``python`` is ``docker.io/library/python``:
distribution/reference normalize.go, ``officialRepoPrefix = "library/"``, "used to normalize familiar names to
canonical names, for example, to convert "ubuntu" to "docker.io/library/ubuntu:latest"").
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

import pulumi
from pulumi_gcp import artifactregistry

from ..catalog.images import split_reference
from ..common.naming import NameLimit, dns_name, mirror_repository_id, project_id_problem
from ..common.options import child_options
from ..common.settings import described, settings_model
from ..common.validation import Choice, check_arguments


class MirrorMode(Choice):
    """Where the images of Docker Hub and ghcr.io are pulled from."""

    CREATE = "create"
    EXISTING = "existing"
    NONE = "none"


@dataclass(frozen=True)
class Upstream:
    """A registry whose images a remote repository caches."""

    key: str
    """The setting that names an existing repository for it (``docker_hub``, ``ghcr``)."""
    what: str
    """Its name in messages."""
    hosts: tuple[str, ...]
    """The registry hosts an image reference names it by."""
    suffix: str
    """The suffix of the repository the stack creates for it (:func:`tpu_serving.common.naming.mirror_repository_id`)."""
    official: str = ""
    """The namespace of a one-component path upstream (Docker Hub's official images: ``library/``)."""


DOCKER_HUB = Upstream(
    "docker_hub",
    "Docker Hub",
    # docker.io is the default domain, index.docker.io its legacy name (distribution/reference normalize.go
    # defaultDomain, legacyDefaultDomain); registry-1.docker.io the endpoint pulls go to (the upstream URI of
    # pulumi-gcp's common_repository example above)
    ("docker.io", "index.docker.io", "registry-1.docker.io"),
    "dockerhub",
    official="library/",
)
GHCR = Upstream("ghcr", "ghcr.io", ("ghcr.io",), "ghcr")
UPSTREAMS: tuple[Upstream, ...] = (DOCKER_HUB, GHCR)
"""The upstreams the stack mirrors: those of its images (the vLLM engine on Docker Hub, the llm-d router's endpoint
picker and sidecar on ghcr.io, the Saxml publisher's ``python``, a stack file's own such as a PathwaysJob batch
container's). Images of Artifact Registry and gcr.io stay as they are."""


def upstream_of(image: str) -> Upstream | None:
    """The upstream ``image`` is pulled from (an image without a registry host is Docker Hub's), or None."""
    ref = split_reference(image)
    if ref is None:
        return None
    if ref.registry is None:
        return DOCKER_HUB
    return next((u for u in UPSTREAMS if ref.registry in u.hosts), None)


def mirrored_image(image: str, repository: str) -> str:
    """``image`` of upstream ``repository`` mirrors, as pulled from ``repository``
    (``<location>-docker.pkg.dev/<project>/<repository id>``): its path (an official Docker Hub image under
    ``library/``), tag and digest kept."""
    ref = split_reference(image)
    upstream = upstream_of(image)
    if ref is None or upstream is None:
        return image
    path = ref.path
    if upstream.official and "/" not in path:
        path = upstream.official + path
    tag, digest = ref.tag, ref.digest
    return f"{repository}/{path}" + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")


def repository_path(location: str, project: str, repository_id: str) -> str:
    """The image path prefix of a Docker repository: ``<location>-docker.pkg.dev/<project>/<repository id>``
    (https://cloud.google.com/artifact-registry/docs/docker/names, "Docker repositories")."""
    return f"{location}-docker.pkg.dev/{project}/{repository_id}"


_REPOSITORY_PATH = re.compile(
    r"^(?P<location>[a-z0-9-]+)-docker\.pkg\.dev/(?P<project>[a-z][a-z0-9-]{4,28}[a-z0-9])"
    r"/(?P<repository>[a-z]([a-z0-9-]{0,61}[a-z0-9])?)$"
)
"""A Docker repository's path: its location, project id (:data:`tpu_serving.common.naming.PROJECT_ID`) and repository id,
read as a DNS-1123 label, as the stack names its own (:func:`repository_args`); Artifact Registry's own limits on a
repository id were not read here."""


def repository_path_problem(path: str | None) -> str:
    """Why ``path`` is not a Docker repository path such as ``us-east5-docker.pkg.dev/my-project/dockerhub``,
    or ``""``."""
    if path is None or _REPOSITORY_PATH.match(path):
        return ""
    return "not an Artifact Registry Docker repository path such as us-east5-docker.pkg.dev/my-project/dockerhub"


@dataclass(frozen=True)
class ImageMirrorSettings:
    """Where the images of Docker Hub and ghcr.io are pulled from (the stack file's ``imageMirror``)."""

    mode: MirrorMode | None = described(
        "`create`: the stack creates an Artifact Registry remote repository in the cluster's region for each "
        "upstream its images come from (`<cluster>-dockerhub` for Docker Hub, `<cluster>-ghcr` for ghcr.io), owns "
        "them (they go with the stack) and pulls those images through them: cached after the first pull, reached "
        "through Private Google Access and not the NAT, streamed with `cluster.imageStreaming`; `existing`: "
        "repositories someone else keeps (a platform team's, another stack's), named by `dockerHub` and `ghcr`, which "
        "the stack never changes; `none`: pull from Docker Hub and ghcr.io, anonymously through the NAT (Docker Hub allows 10 "
        "pulls per hour per IPv4 address; the preview says so). Unset: `create` when the stack creates its cluster "
        "(a recreated slice must not wait on Docker Hub's limit), `none` on an existing cluster (the stack creates "
        "no project-level resource there unasked).",
        default=None,
    )
    docker_hub: str | None = described(
        "With `existing`: the Docker Hub remote repository, as `<location>-docker.pkg.dev/<project>/<repository>`.",
        default=None,
        check=repository_path_problem,
    )
    ghcr: str | None = described(
        "With `existing`: the ghcr.io remote repository, as `<location>-docker.pkg.dev/<project>/<repository>`.",
        default=None,
        check=repository_path_problem,
    )

    def problems(self) -> list[str]:
        """The repositories are named exactly with ``existing``."""
        if self.mode is None or str(self.mode) == MirrorMode.EXISTING:
            return []
        return [
            f"{u.key} names an existing repository, but mode = {self.mode}: set mode to {MirrorMode.EXISTING} or "
            f"remove {u.key}"
            for u in UPSTREAMS
            if getattr(self, u.key) is not None
        ]


if TYPE_CHECKING:
    ImageMirrorConfig: TypeAlias = ImageMirrorSettings
else:
    ImageMirrorConfig = settings_model(ImageMirrorSettings, "ImageMirrorConfig")
"""The stack file's ``imageMirror`` (:class:`ImageMirrorSettings`, declared once there)."""


def effective_mode(mode: MirrorMode | str | None, existing_cluster: bool) -> MirrorMode:
    """The mode a stack uses: the one set, else ``create`` for a cluster it creates and ``none`` on an existing one."""
    if mode is None:
        return MirrorMode.NONE if existing_cluster else MirrorMode.CREATE
    return MirrorMode(str(mode))


REMOTE_REPOSITORY = "REMOTE_REPOSITORY"
"""The ``mode`` of a pull-through cache (pulumi-gcp 10.2.0 artifactregistry/repository.py, ``mode``)."""


def remote_repository_config(upstream: Upstream) -> dict[str, object]:
    """The ``remote_repository_config`` of ``upstream``'s remote repository: Docker Hub's preset, or ghcr.io's URI
    (a ``common_repository``, which replaces the deprecated ``docker_repository.custom_repository``)."""
    if upstream is DOCKER_HUB:
        return {"description": "Docker Hub", "docker_repository": {"public_repository": "DOCKER_HUB"}}
    return {"description": upstream.what, "common_repository": {"uri": f"https://{upstream.hosts[0]}"}}


@dataclass(frozen=True)
class ImageMirrorArgs:
    """Arguments of :class:`ImageMirror`."""

    project: str = described("GCP project ID of the repositories.", check=project_id_problem)
    location: str = described("Their location: the cluster's region.")
    cluster: str = described("The cluster's name, the prefix of the repositories' names.")
    docker_hub: bool = described("Create the Docker Hub remote repository.", default=False)
    ghcr: bool = described("Create the ghcr.io remote repository.", default=False)
    labels: Mapping[str, str] = described("GCP labels of the repositories.", default_factory=dict)

    @property
    def upstreams(self) -> Sequence[Upstream]:
        """The upstreams whose repositories are created."""
        return [u for u in UPSTREAMS if getattr(self, u.key)]


def repository_args(args: ImageMirrorArgs, upstream: Upstream) -> dict[str, object]:
    """The arguments of ``upstream``'s remote repository (pure)."""
    return {
        "project": args.project,
        "location": args.location,
        "repository_id": dns_name(mirror_repository_id(args.cluster, upstream.suffix), limit=NameLimit.K8S_LABEL),
        "format": "DOCKER",
        "mode": REMOTE_REPOSITORY,
        "description": f"Pull-through cache of {upstream.what} for the images of cluster {args.cluster} (tpu-serving)",
        "remote_repository_config": remote_repository_config(upstream),
        "labels": dict(args.labels),
    }


class ImageMirror(pulumi.ComponentResource):
    """The remote repositories the stack's Docker Hub and ghcr.io images are pulled through."""

    repositories: dict[str, artifactregistry.Repository]
    """By upstream key."""
    paths: dict[str, str]
    """Each repository's image path prefix, by upstream key."""

    def __init__(self, name: str, args: ImageMirrorArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"ImageMirror {name!r}", args, ImageMirrorArgs)
        super().__init__("tpu-serving:index:ImageMirror", name, None, opts)
        child = child_options(self, opts)  # the repositories wait for the project's APIs
        self.repositories, self.paths = {}, {}
        for u in args.upstreams:
            spec = repository_args(args, u)
            self.repositories[u.key] = artifactregistry.Repository(f"{name}-{u.suffix}", **spec, opts=child)
            self.paths[u.key] = repository_path(args.location, args.project, str(spec["repository_id"]))
        self.register_outputs({"paths": self.paths})
