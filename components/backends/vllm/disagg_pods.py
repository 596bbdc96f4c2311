"""Pure builders of the disaggregated mode's DisaggregatedSet and Service, from
:class:`~.disagg_args.VllmDisaggregatedArgs`.

One LeaderWorkerSet v0.10.0 DisaggregatedSet (``disaggregatedset.x-k8s.io/v1``, alpha) with two roles, ``prefill``
and ``decode``, each an inline LeaderWorkerSet spec built as the single-engine mode builds its own
(:func:`~.pods.leader_worker_set_spec`): one group per slice, Ray across the slice's VMs, the TPU KV connector's
environment and ports on every pod, the router's sidecar on the decode leaders.

Why one DisaggregatedSet and not a LeaderWorkerSet per role: every field a role needs (its pool's node selector,
its TPU requests, its group size, restart policy, environment and ports, the one-group-per-node-pool annotation on
the role's metadata) is inside the role (kubernetes-sigs/lws@v0.10.0 api/disaggregatedset/v1/
disaggregatedset_types.go l.46-111: each role an inline ``LeaderWorkerSetTemplateSpec``); each role gets a scale
subresource of its own (the DisaggregatedSetRoleScaler of a ``scaling.mode: External`` role); and the controller's
``disaggregatedset.x-k8s.io/revision`` label lets the endpoint picker pair prefill and decode of one revision
during a rollout. What it costs, accepted here: the controller names the children (``<ds>-0-<rev8>-<role>``, LWS
pkg/controllers/disaggregatedset/lws_manager.go l.59-99), so everything selects them by label and the stack declares
no object of theirs (no LeaderWorkerSet, no ``<lws>-prv`` Service, no role scaler); a change outside a role's
``leaderWorkerTemplate`` (its rollout strategy, its metadata) reaches existing LeaderWorkerSets only with the next
template change (the controller never updates a child's spec, lws_manager.go l.101-131, l.261-272); External
scaling needs ``slices: 1`` (its webhook, pkg/webhooks/disaggregatedset/disaggregatedset_webhook.go l.96-102).
"""

import dataclasses

import pulumi_kubernetes as k8s

from ...platform import lws
from .args import VllmServingArgs
from .disagg_args import VllmDisaggregatedArgs
from .facts import ROLE_LABEL
from .kv import DS_NAME_LABEL, DS_ROLE_LABEL, PD_ROLE_LABEL, KvRole
from .pods import leader_service, leader_worker_set_spec


def role_labels(name: str, role: KvRole) -> dict[str, str]:
    """Labels of a role's pods: the DisaggregatedSet's own two (the controller sets the same values) and the router's
    role label (:data:`~.kv.PD_ROLE_LABEL`)."""
    return {DS_NAME_LABEL: name, DS_ROLE_LABEL: role.value, PD_ROLE_LABEL: role.value}


def role_leaders(name: str, role: KvRole) -> dict[str, str]:
    """Labels of a role's leaders, which run its server."""
    return {DS_NAME_LABEL: name, DS_ROLE_LABEL: role.value, ROLE_LABEL: "leader"}


def role_args(args: VllmDisaggregatedArgs, role: KvRole) -> VllmServingArgs:
    """A role's engine arguments with the role's labels on its pods."""
    engine = args.prefill if role == KvRole.PREFILL else args.decode
    return dataclasses.replace(engine, labels={**engine.labels, **role_labels(args.name, role)})


def role_spec(args: VllmDisaggregatedArgs, role: KvRole) -> dict[str, object]:
    """One entry of ``spec.roles``: the role's LeaderWorkerSet, one group per slice of its node pools (the
    exclusive-topology annotation on the role's metadata, which the controller copies onto the LeaderWorkerSet;
    the webhook refuses it only with a ``placementPolicy`` other than None, disaggregatedset_webhook.go l.111-136).
    An autoscaled role is ``scaling.mode: External``: its group count is its role scaler's, and the role names
    none (disaggregatedset_types.go l.103-111)."""
    engine = role_args(args, role)
    out: dict[str, object] = {
        "name": role.value,
        "metadata": {"labels": dict(args.labels), "annotations": dict(lws.ONE_GROUP_PER_NODE_POOL)},
        "spec": leader_worker_set_spec(engine),
    }
    if engine.autoscaled:
        out["scaling"] = {"mode": "External"}
    return out


def disaggregated_set_spec(args: VllmDisaggregatedArgs) -> dict[str, object]:
    """``spec`` of the DisaggregatedSet: one copy of the two roles (``slices: 1``, which External scaling requires)
    and no placement policy (each group already takes a node pool of its own)."""
    return {"slices": 1, "roles": [role_spec(args, KvRole.PREFILL), role_spec(args, KvRole.DECODE)]}


def service_args(args: VllmDisaggregatedArgs) -> k8s.core.v1.ServiceInitArgs:
    """ClusterIP Service on the decode leaders' sidecars: a request without the picker's prefill header is decoded
    (and prefilled) by the decode server alone (llm-d-router@v0.10.0 docs/disaggregation.md l.96-115)."""
    return leader_service(args.service_name, args.namespace, args.labels, role_leaders(args.name, KvRole.DECODE))


SIDECAR_POOL_GROUP = "inference.networking.k8s.io"
"""The InferencePool API group the sidecar's allowlist watches (llm-d-router@v0.10.0 pkg/sidecar/proxy/options.go
l.225, its ``--pool-group`` default; pkg/common/routing/common.go l.28)."""


def sidecar_role_name(args: VllmDisaggregatedArgs) -> str:
    return f"{args.name}-routing-sidecar"


def sidecar_role(args: VllmDisaggregatedArgs) -> k8s.rbac.v1.RoleInitArgs:
    """What the decode sidecar's SSRF allowlist reads in its namespace (llm-d-router@v0.10.0
    pkg/sidecar/proxy/allowlist.go): its InferencePool, listed and watched by name (l.140-167: ``list``,
    ``watch``), and the pods the pool selects (l.297-314: ``list``, ``watch``); ``get`` beside them as the
    informers' usual grant. Bound to the pods' service account, whose token only the sidecar mounts."""
    read = ["get", "list", "watch"]
    return k8s.rbac.v1.RoleInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=sidecar_role_name(args), namespace=args.namespace, labels=dict(args.labels)
        ),
        rules=[
            k8s.rbac.v1.PolicyRuleArgs(api_groups=[SIDECAR_POOL_GROUP], resources=["inferencepools"], verbs=read),
            k8s.rbac.v1.PolicyRuleArgs(api_groups=[""], resources=["pods"], verbs=read),
        ],
    )


def sidecar_role_binding(args: VllmDisaggregatedArgs) -> k8s.rbac.v1.RoleBindingInitArgs:
    """:func:`sidecar_role` for the pods' Kubernetes service account."""
    return k8s.rbac.v1.RoleBindingInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=sidecar_role_name(args), namespace=args.namespace, labels=dict(args.labels)
        ),
        role_ref=k8s.rbac.v1.RoleRefArgs(
            api_group="rbac.authorization.k8s.io", kind="Role", name=sidecar_role_name(args)
        ),
        subjects=[
            k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=args.decode.service_account, namespace=args.namespace)
        ],
    )
