"""``ProjectServices``: the Google Cloud APIs a stack uses, enabled before anything else.

A new project has almost no API enabled; creating a cluster, a bucket or a service account
there fails until its API is on. Each API is a ``gcp.projects.Service`` that the other
components take in ``depends_on``. Destroying the stack leaves the APIs on
(``disable_on_destroy=False``): other workloads in the project may use them, and turning
an API off deletes its resources.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
from pulumi_gcp import projects

from ..common.naming import project_problems
from ..common.validation import check_arguments

BASE_APIS: tuple[str, ...] = (
    "container.googleapis.com",
    "compute.googleapis.com",
    "iam.googleapis.com",
    "iamcredentials.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "storage.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
)
"""APIs of every stack: GKE and its VMs (container, compute), service accounts and workload
identity token exchange (iam, iamcredentials), project IAM bindings (cloudresourcemanager),
buckets (storage), and the cluster's logging and monitoring
(https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity#before_you_begin,
https://cloud.google.com/kubernetes-engine/docs/how-to/creating-a-zonal-cluster#before_you_begin)."""

IMAGE_STREAMING_API = "containerfilesystem.googleapis.com"
"""Container File System API, required by GKE image streaming
(https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming#requirements)."""


NETWORK_SERVICES_API = "networkservices.googleapis.com"
"""Network Services API, required by GKE Inference Gateway (an InferencePool and its endpoint picker,
which GKE programs as a Service Extension of the load balancer): "Enable the Compute Engine API, the
Network Services API, and the Model Armor API if needed"
(https://cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway, "Before you begin").
A plain Gateway needs no more than the base APIs
(https://cloud.google.com/kubernetes-engine/docs/how-to/deploying-gateways, "Before you begin")."""


BINARY_AUTHORIZATION_API = "binaryauthorization.googleapis.com"
"""Binary Authorization API, required before a cluster enforces Binary Authorization: "Enable the Binary
Authorization API" (https://cloud.google.com/binary-authorization/docs/setting-up, "Enable Binary
Authorization")."""


ARTIFACT_REGISTRY_API = "artifactregistry.googleapis.com"
"""Artifact Registry API, required before the stack creates its image mirror's repositories: "Enable the Artifact
Registry API" (https://cloud.google.com/artifact-registry/docs/repositories/remote-repo, "Before you begin")."""


API_ARGUMENTS: dict[str, str] = {
    **{api: "" for api in BASE_APIS},
    IMAGE_STREAMING_API: "image_streaming=True",
    NETWORK_SERVICES_API: "inference_pool=True",
    BINARY_AUTHORIZATION_API: "binary_authorization=True",
    ARTIFACT_REGISTRY_API: "artifact_registry=True",
}
"""Each API :func:`required_apis` lists, and the argument that adds it (``""``: every stack's)."""


def required_apis(
    image_streaming: bool,
    inference_pool: bool = False,
    binary_authorization: bool = False,
    artifact_registry: bool = False,
) -> tuple[str, ...]:
    """The APIs a stack needs, in a stable order: the base set, then one per feature that needs its own."""
    return (
        BASE_APIS
        + ((IMAGE_STREAMING_API,) if image_streaming else ())
        + ((NETWORK_SERVICES_API,) if inference_pool else ())
        + ((BINARY_AUTHORIZATION_API,) if binary_authorization else ())
        + ((ARTIFACT_REGISTRY_API,) if artifact_registry else ())
    )


@dataclass(frozen=True)
class ProjectServicesArgs:
    """Arguments of :class:`ProjectServices`."""

    project: str
    """GCP project ID."""
    apis: Sequence[str]
    """Service names, e.g. ``container.googleapis.com``."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.common.validation`)."""
        return project_problems(self.project)


class ProjectServices(pulumi.ComponentResource):
    """The project's APIs, enabled and kept on when the stack is destroyed."""

    services: list[projects.Service]
    """One ``gcp.projects.Service`` per API."""

    def __init__(self, name: str, args: ProjectServicesArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"ProjectServices {name!r}", args, ProjectServicesArgs)
        super().__init__("tpu-serving:index:ProjectServices", name, None, opts)
        self.services = [
            projects.Service(
                f"{name}-{api.split('.')[0]}",
                project=args.project,
                service=api,
                disable_on_destroy=False,
                disable_dependent_services=False,
                opts=pulumi.ResourceOptions(parent=self),
            )
            for api in args.apis
        ]
        self.register_outputs({"apis": list(args.apis)})
