"""``ControllerInstall``: a pinned upstream controller release, applied server-side.

LeaderWorkerSet, JobSet and PathwaysJob are installed from their release manifests (CRDs,
RBAC, the controller Deployment and its webhook) with the Kubernetes provider's
``yaml/v2.ConfigGroup``, which applies with server-side apply and waits for the
Deployment. Custom resources of the controller take the install in ``depends_on``, so
they are created only once the webhook answers.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from .validation import check_arguments
from .versions import PINS


@dataclass(frozen=True)
class Controller:
    """An upstream controller whose releases publish one install manifest."""

    name: str
    """Short name, e.g. ``lws``."""
    api_group: str
    """API group of its custom resources."""
    manifest_url: str
    """Release manifest URL with ``{version}`` in place of the release tag."""
    default_version: str
    """The release installed when a stack names none."""
    min_version: str | None = None
    """Oldest release the library's objects are valid for."""
    newest_version: str | None = None
    """Newest release known to the version set: a newer one's manifest and CRDs were not read, so the library's
    objects are not known to be valid for it (and its manifest URL may not exist)."""

    def newer_problem(self, version: str) -> str:
        """Why ``version`` (a well-formed release) is newer than the version set knows, or ``""``."""
        if self.newest_version and parse_version(version) > parse_version(self.newest_version):
            return (
                f"{self.name} {version} is newer than the newest release known to the version set, "
                f"{self.newest_version} (tpu-serving versions --sources): its manifest and CRDs were not read here"
            )
        return ""

    def url(self, version: str) -> str:
        """The release manifest of ``version``."""
        return self.manifest_url.format(version=version)


LWS = Controller(
    name="lws",
    api_group="leaderworkerset.x-k8s.io",
    manifest_url="https://github.com/kubernetes-sigs/lws/releases/download/{version}/manifests.yaml",
    default_version=PINS["lws"].value,
    newest_version=PINS["lws"].newest,
    min_version="v0.4.0",
)
JOBSET = Controller(
    name="jobset",
    api_group="jobset.x-k8s.io",
    manifest_url="https://github.com/kubernetes-sigs/jobset/releases/download/{version}/manifests.yaml",
    default_version=PINS["jobset"].value,
    newest_version=PINS["jobset"].newest,
    min_version="v0.2.3",
)
PATHWAYS_JOB = Controller(
    name="pathways-job",
    api_group="pathways-job.pathways.domain",
    manifest_url="https://github.com/google/pathways-job/releases/download/{version}/install.yaml",
    default_version=PINS["pathways-job"].value,
    newest_version=PINS["pathways-job"].newest,
    min_version="v0.1.4",
)

_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


def parse_version(version: str) -> tuple[int, int, int]:
    """``"v0.10.0"`` -> ``(0, 10, 0)``; :class:`ValueError` for anything else."""
    m = _VERSION.match(version)
    if not m:
        raise ValueError(f"release {version!r} is not of the form vMAJOR.MINOR.PATCH")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


@dataclass(frozen=True)
class ControllerInstallArgs:
    """Arguments of :class:`ControllerInstall`."""

    controller: Controller
    """Which controller."""
    version: str
    """Its release tag, e.g. ``v0.10.0``."""


class ControllerInstall(pulumi.ComponentResource):
    """One controller release, applied server-side from its pinned release manifest.

    Pass the cluster's Kubernetes provider in ``opts.providers`` and whatever must exist
    first (the CPU node pool that runs the controller) in ``opts.depends_on``.
    """

    manifests: k8s.yaml.v2.ConfigGroup
    """The release manifest's objects (expanded by the provider)."""
    version: str
    """The installed release."""
    api_group: str
    """API group of the controller's custom resources."""

    def __init__(self, name: str, args: ControllerInstallArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments("ControllerInstall", args, ControllerInstallArgs)
        super().__init__("tpu-serving:index:ControllerInstall", name, None, opts)
        parse_version(args.version)
        self.version = args.version
        self.api_group = args.controller.api_group
        self.manifests = k8s.yaml.v2.ConfigGroup(
            f"{name}-manifests",
            files=[args.controller.url(args.version)],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"version": args.version, "url": args.controller.url(args.version)})


def installs_by_group(installs: Sequence[ControllerInstall]) -> dict[str, str]:
    """API group -> installed release, for stack outputs and schema checks."""
    return {i.api_group: i.version for i in installs}
