"""``VllmServing``: vLLM TPU (vllm-project/tpu-inference) serving on a LeaderWorkerSet."""

import pulumi
import pulumi_kubernetes as k8s

from ...catalog.versions import PINS
from ...common.validation import check_arguments
from ...operations.autoscaling import AutoscalingSettings
from ...platform import lws
from ..base import ServingNeighbours
from ..groups import GroupWorkload, group_resources, leader_pod, port_forward
from .args import VllmServingArgs, WeightsLoader
from .facts import HTTP_PORT, caution, unpinned_revision, unverified_engine
from .neighbours import neighbours
from .pods import leader_worker_set_spec, service_args


def client_examples(namespace: str, service: str, model: str) -> tuple[str, str]:
    """``kubectl port-forward`` to ``service``'s serving port, and a ``curl`` completion of ``model`` through it."""
    forward = port_forward(namespace, service, HTTP_PORT)
    completion = (
        f"curl -s localhost:{HTTP_PORT}/v1/completions -H 'Content-Type: application/json' "
        f'-d \'{{"model": "{model}", "prompt": "What are the top 5 programming languages", '
        '"max_tokens": 200}\''
    )
    return forward, completion


class VllmServing(pulumi.ComponentResource):
    """vLLM TPU serving: a LeaderWorkerSet (one group per slice) and a ClusterIP Service on its leaders.

    Pass the cluster's Kubernetes provider in ``opts.providers``. The LeaderWorkerSet waits
    for its ``opts.depends_on`` (the LWS install and the slice node pools).
    """

    service: k8s.core.v1.Service
    """The ClusterIP Service on port 8000."""
    leader_pod: str
    """Name of the first group's leader pod."""
    port_forward: str
    """``kubectl port-forward`` command to reach the server from a workstation."""
    completion_example: str
    """A ``curl`` request to ``/v1/completions`` through that port-forward."""
    engine: str | None
    """What runs unverified (``images.unverified_vllm``: an engine image of another release), or None."""
    caution: str | None
    """What GKE and tpu-inference do not stand behind in this serving (groups over several VMs), or None; also a
    warning of the engine and the ``caution`` output."""

    def __init__(self, name: str, args: VllmServingArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"VllmServing {name!r}", args, VllmServingArgs)
        super().__init__("tpu-serving:index:VllmServing", name, None, opts)
        self._args = args
        workload = GroupWorkload(
            args.name,
            args.namespace,
            args.labels,
            lws.ONE_GROUP_PER_NODE_POOL,
            leader_worker_set_spec(args),
            service_args(args),
        )
        children = group_resources(self, name, workload, opts)
        self.leader_worker_set = children.leader_worker_set
        self.disruption_budget = children.disruption_budget
        self.service = children.service
        self.leader_pod = leader_pod(args.name)
        self.port_forward, self.completion_example = client_examples(
            args.namespace, args.service_name, args.served_model_name
        )
        self.engine = (
            unverified_engine(args.images.engine, PINS["vllm-tpu"].version) if args.images.unverified_vllm else None
        )
        if self.engine is not None:  # the preview's Engine: line reads it (tools/preview/stack.py engine_summary)
            pulumi.log.warn(f"Engine: {self.engine}", resource=self)
        self.caution = caution(args.shape)
        if self.caution is not None:  # the preview's Caution: line reads it (tools/preview/stack.py caution_summary)
            pulumi.log.warn(f"Caution: {self.caution}", resource=self)
        unpinned = unpinned_revision(args.model, args.loader == WeightsLoader.HUGGING_FACE, args.model_revision)
        self.register_outputs(
            {
                "leaderPod": self.leader_pod,
                "portForward": self.port_forward,
                "service": args.service_name,
                **({"caution": self.caution} if self.caution is not None else {}),
                **({"engine": self.engine} if self.engine is not None else {}),
                **({"unpinned": unpinned} if unpinned is not None else {}),
            }
        )

    def neighbours(self, autoscaling: AutoscalingSettings | None = None, *, probe: bool = True) -> ServingNeighbours:
        """What ``Tenancy``, ``Observability``, ``ServingAutoscaler`` and ``ServingGateway`` need of this serving, its
        groups scaled by a ``ServingAutoscaler`` of ``autoscaling`` (None: fixed at ``replicas``), with its serving
        probe unless ``probe`` is False, as the stack file's deployment derives them (:func:`.neighbours.neighbours`)."""
        return neighbours(self._args, autoscaling, probe=probe)
