"""``VllmDisaggregatedServing``: vLLM TPU prefill and decode engines in one LeaderWorkerSet DisaggregatedSet."""

import pulumi
import pulumi_kubernetes as k8s

from ...catalog.versions import PINS
from ...common.options import child_options
from ...common.validation import check_arguments
from ...platform import lws
from .args import WeightsLoader
from .component import client_examples
from .disagg_args import VllmDisaggregatedArgs
from .disagg_pods import disaggregated_set_spec, service_args, sidecar_role, sidecar_role_binding
from .facts import unpinned_revision, unverified_engine
from .kv import DS_API_VERSION, DS_KIND, DS_NAME_LABEL, DS_ROLE_LABEL, KvRole, role_scaler


class VllmDisaggregatedServing(pulumi.ComponentResource):
    """Disaggregated vLLM TPU serving: a DisaggregatedSet of a prefill and a decode role (one LeaderWorkerSet group
    per slice each, the TPU KV connector between them) and a ClusterIP Service on the decode leaders' sidecars.

    Pass the cluster's Kubernetes provider in ``opts.providers``; the DisaggregatedSet waits for its
    ``opts.depends_on`` (the LWS install, which serves the DisaggregatedSet API since v0.9.0, and the node pools).
    """

    disaggregated_set: k8s.apiextensions.CustomResource
    """The DisaggregatedSet."""
    service: k8s.core.v1.Service
    """The ClusterIP Service on the decode leaders' port 8000."""
    role_scalers: dict[str, str]
    """Role -> the DisaggregatedSetRoleScaler its controller creates for an autoscaled role (``<name>-<role>``)."""
    port_forward: str
    """``kubectl port-forward`` command to reach a decode server from a workstation."""
    completion_example: str
    """A ``curl`` request to ``/v1/completions`` through that port-forward."""

    def __init__(self, name: str, args: VllmDisaggregatedArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"VllmDisaggregatedServing {name!r}", args, VllmDisaggregatedArgs)
        super().__init__("tpu-serving:index:VllmDisaggregatedServing", name, None, opts)
        self.disaggregated_set = k8s.apiextensions.CustomResource(
            f"{name}-ds",
            api_version=DS_API_VERSION,
            kind=DS_KIND,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=args.name, namespace=args.namespace, labels=dict(args.labels)),
            spec=disaggregated_set_spec(args),
            opts=child_options(self, opts),
        )
        self.service = k8s.core.v1.Service(f"{name}-svc", service_args(args), opts=child_options(self, opts))
        self.disruption_budgets = [
            k8s.policy.v1.PodDisruptionBudget(
                f"{name}-{role.value}-pdb",
                lws.group_disruption_budget(
                    k8s.meta.v1.ObjectMetaArgs(
                        name=f"{args.name}-{role.value}", namespace=args.namespace, labels=dict(args.labels)
                    ),
                    {DS_NAME_LABEL: args.name, DS_ROLE_LABEL: role.value},
                ),
                opts=child_options(self, opts),
            )
            for role in (KvRole.PREFILL, KvRole.DECODE)
        ]
        reader = k8s.rbac.v1.Role(f"{name}-sidecar-role", sidecar_role(args), opts=child_options(self, opts))
        k8s.rbac.v1.RoleBinding(
            f"{name}-sidecar-binding",
            sidecar_role_binding(args),
            opts=pulumi.ResourceOptions.merge(child_options(self, opts), pulumi.ResourceOptions(depends_on=[reader])),
        )
        self.role_scalers = {
            r.value: role_scaler(args.name, r)
            for r, e in ((KvRole.PREFILL, args.prefill), (KvRole.DECODE, args.decode))
            if e.autoscaled
        }
        self.port_forward, self.completion_example = client_examples(
            args.namespace, args.service_name, args.prefill.served_model_name
        )
        images = args.prefill.images
        engine = unverified_engine(images.engine, PINS["vllm-tpu"].version) if images.unverified_vllm else None
        if engine is not None:  # the preview's Engine: line reads it (tools/preview/stack.py engine_summary)
            pulumi.log.warn(f"Engine: {engine}", resource=self)
        unpinned = unpinned_revision(
            args.prefill.model, args.prefill.loader == WeightsLoader.HUGGING_FACE, args.prefill.model_revision
        )
        self.register_outputs(
            {
                "disaggregatedSet": args.name,
                "service": args.service_name,
                "roleScalers": self.role_scalers,
                **({"engine": engine} if engine is not None else {}),
                **({"unpinned": unpinned} if unpinned is not None else {}),
            }
        )
