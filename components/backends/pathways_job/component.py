"""``PathwaysWorkload``: Pathways batch and interactive jobs with the PathwaysJob API.

One ``PathwaysJob``: the controller builds a JobSet of the Pathways head (resource manager and
IFRT proxy) and one worker per TPU VM. A **batch** workload carries the user's container as
``controller.template`` and ends with it; an **interactive** one has no template and waits for
a JAX client to connect to the IFRT proxy (port 29000).
"""

import pulumi
import pulumi_kubernetes as k8s

from ...common.options import child_options
from ...common.validation import check_arguments
from .args import PathwaysWorkloadArgs, client_jax_version
from .facts import PROXY_PORT
from .pods import head_pod_command, pathways_job_spec


class PathwaysWorkload(pulumi.ComponentResource):
    """A Pathways batch or interactive workload: one PathwaysJob.

    Pass the cluster's Kubernetes provider in ``opts.providers``; the PathwaysJob waits for
    its ``opts.depends_on`` (the PathwaysJob and JobSet installs, the slices, the bucket).
    """

    port_forward: str | None
    """Interactive only: the command that forwards the IFRT proxy to localhost:29000."""
    client_env: dict[str, str] | None
    """Interactive only: environment of a local JAX client using the proxy."""
    client_pip: str
    """The client install that matches the Pathways release."""

    def __init__(self, name: str, args: PathwaysWorkloadArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"PathwaysWorkload {name!r}", args, PathwaysWorkloadArgs)
        super().__init__("tpu-serving:index:PathwaysWorkload", name, None, opts)
        self.pathways_job = k8s.apiextensions.CustomResource(
            f"{name}-job",
            api_version="pathways-job.pathways.domain/v1",
            kind="PathwaysJob",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=args.name, namespace=args.namespace, labels=dict(args.labels)),
            spec=pathways_job_spec(args),
            # The CRD makes the spec immutable (x-kubernetes-validations `self == oldSelf` on
            # maxRestarts, pathwaysDir, pathwaysVersion, workers, customComponents and the
            # controller's fields): any change must replace the PathwaysJob.
            opts=pulumi.ResourceOptions.merge(
                child_options(self, opts),
                pulumi.ResourceOptions(replace_on_changes=["spec"], delete_before_replace=True),
            ),
        )
        self.port_forward = self.client_env = None
        if args.container is None:
            self.port_forward = (
                f"kubectl -n {args.namespace} port-forward $({head_pod_command(args)}) {PROXY_PORT}:{PROXY_PORT}"
            )
            self.client_env = {"JAX_PLATFORMS": "proxy", "JAX_BACKEND_TARGET": f"grpc://127.0.0.1:{PROXY_PORT}"}
        self.client_pip = f"pip install pathwaysutils jax=={client_jax_version(args.pathways_version)}"
        self.register_outputs({"portForward": self.port_forward, "clientEnv": self.client_env})
