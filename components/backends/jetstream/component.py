"""``PathwaysServing``: JetStream + MaxText on Pathways, as one LeaderWorkerSet."""

import pulumi
import pulumi_kubernetes as k8s

from ...common.validation import check_arguments
from ..groups import GroupWorkload, group_resources, leader_pod, port_forward
from .args import PathwaysServingArgs
from .facts import HTTP_PORT
from .pods import leader_worker_set_spec, service_args, topology_annotation


class PathwaysServing(pulumi.ComponentResource):
    """JetStream + Pathways multi-host serving: a LeaderWorkerSet and a ClusterIP Service.

    Pass the cluster's Kubernetes provider in ``opts.providers``. The LeaderWorkerSet
    waits for its ``opts.depends_on`` (the LWS install and the slice node pools).
    """

    service: k8s.core.v1.Service
    """The ClusterIP Service on port 8000."""
    leader_pod: str
    """Name of the first group's leader pod."""
    port_forward: str
    """``kubectl port-forward`` command to reach the server from a workstation."""
    generate_example: str
    """A ``curl`` request to ``/generate`` through that port-forward."""

    def __init__(self, name: str, args: PathwaysServingArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"PathwaysServing {name!r}", args, PathwaysServingArgs)
        super().__init__("tpu-serving:index:PathwaysServing", name, None, opts)
        workload = GroupWorkload(
            args.name,
            args.namespace,
            args.labels,
            topology_annotation(args),
            leader_worker_set_spec(args),
            service_args(args),
        )
        children = group_resources(self, name, workload, opts)
        self.leader_worker_set = children.leader_worker_set
        self.disruption_budget = children.disruption_budget
        self.service = children.service
        self.leader_pod = leader_pod(args.name)
        self.port_forward = port_forward(args.namespace, args.service_name, HTTP_PORT)
        self.generate_example = (
            f"curl -s -X POST localhost:{HTTP_PORT}/generate -H 'Content-type: application/json' "
            '-d \'{"prompt": "What are the top 5 programming languages", "max_tokens": 200}\''
        )
        self.register_outputs(
            {"leaderPod": self.leader_pod, "portForward": self.port_forward, "service": args.service_name}
        )
