"""What the team that operates a variant may do in the cluster: enough to run the stack's runbooks
(``tpu-serving runbook``, docs/operate.md, docs/upgrade.md), and no more.

- In the serving namespace, a Role (:data:`OPERATOR_RULES`): observe, logs, port-forward, restart pods and workloads;
  read and patch the HPAs (the runbooks hold their scale-downs and move their bounds); evict pods (``kubectl
  drain``'s eviction).
- On the cluster, a ClusterRole (:data:`NODE_RULES`): read and patch nodes (cordon, uncordon, the out-of-service
  taint, GKE's ``cloud.google.com/perform-maintenance`` label), list pods and read DaemonSets in every namespace
  (``kubectl drain`` lists the node's pods and skips DaemonSets' with ``--ignore-daemonsets``). Its evictions stay
  in the serving namespace: a drain that meets another namespace's pod stops, Forbidden.
- A ValidatingAdmissionPolicy (:func:`node_policy`) holds the operators' node updates to the stack's own TPU node
  pools, and their label changes to the maintenance label: RBAC cannot name nodes by label, and on a shared cluster
  the ClusterRole alone let one tenant's on-call cordon, taint or start the maintenance of another tenant's slice
  (GKE review round 54, M1, on the real API server). The policy is created before the rights.

GKE authorizes a request that either IAM or RBAC allows (cloud.google.com/kubernetes-engine/docs/concepts/
access-control); these grants are the RBAC half, scoped to the variant. The ``gcloud container`` half of the
runbooks (a node pool's upgrade, its autoscaling) needs IAM ``container.clusters.update`` on the cluster's project
(``roles/container.clusterAdmin`` holds it), which no Kubernetes object can grant (docs/security.md).

GKE review round 53, M1: the on-call group had none of the HPA, node or eviction rights the runbooks use; a
SubjectAccessReview on the real API server denied 6 of their 9 kubectl steps.
"""

from collections.abc import Mapping, Sequence

import pulumi_kubernetes as k8s

from .naming import OPERATOR, operator_nodes_name
from .node_admission import cel_list, node_update_policy, policy_binding

Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""(API groups, resources, verbs) of one RBAC rule."""

OPERATOR_RULES: tuple[Rule, ...] = (
    (
        ("",),
        ("pods", "pods/log", "services", "endpoints", "configmaps", "events", "resourcequotas"),
        ("get", "list", "watch"),
    ),
    (("",), ("pods",), ("delete",)),
    (("",), ("pods/portforward",), ("create",)),
    (("",), ("pods/eviction",), ("create",)),
    (("apps",), ("deployments", "replicasets"), ("get", "list", "watch")),
    (("apps",), ("deployments",), ("patch",)),
    (("autoscaling",), ("horizontalpodautoscalers",), ("get", "list", "watch", "patch")),
    (("batch",), ("jobs", "cronjobs"), ("get", "list", "watch")),
    (("leaderworkerset.x-k8s.io",), ("leaderworkersets",), ("get", "list", "watch", "patch")),
    # A DisaggregatedSet and the role scalers its HPAs drive (LWS v0.10.0 config/crd: plural names
    # disaggregatedsets, disaggregatedsetrolescalers), read only: a change goes through pulumi up.
    (("disaggregatedset.x-k8s.io",), ("disaggregatedsets", "disaggregatedsetrolescalers"), ("get", "list", "watch")),
    (("jobset.x-k8s.io",), ("jobsets",), ("get", "list", "watch")),
    (("pathways-job.pathways.domain",), ("pathwaysjobs",), ("get", "list", "watch", "delete")),
)
"""What operators of a variant may do in its namespace: observe, port-forward, restart pods and workloads, hold and
move the HPAs' bounds, evict for a drain. Creating or changing workloads stays with ``pulumi up``."""

NODE_RULES: tuple[Rule, ...] = (
    (("",), ("nodes",), ("get", "list", "watch", "patch")),
    (("",), ("pods",), ("list",)),
    (("apps",), ("daemonsets",), ("get",)),
)
"""What operators may do on the cluster: the runbooks' node steps (``kubectl cordon``, ``uncordon``, ``drain``,
``taint``, ``label nodes``; kubectl's drain lists the node's pods in every namespace and reads the DaemonSet of each
DaemonSet pod it skips)."""

RBAC_GROUP = "rbac.authorization.k8s.io"


def _rules(rules: Sequence[Rule]) -> list[k8s.rbac.v1.PolicyRuleArgs]:
    return [
        k8s.rbac.v1.PolicyRuleArgs(api_groups=list(groups), resources=list(resources), verbs=list(verbs))
        for groups, resources, verbs in rules
    ]


def subjects(groups: Sequence[str], users: Sequence[str]) -> list[k8s.rbac.v1.SubjectArgs]:
    """The operators' groups and users as RBAC subjects."""
    return [k8s.rbac.v1.SubjectArgs(kind="Group", name=g, api_group=RBAC_GROUP) for g in groups] + [
        k8s.rbac.v1.SubjectArgs(kind="User", name=u, api_group=RBAC_GROUP) for u in users
    ]


def role(namespace: str, labels: Mapping[str, str]) -> k8s.rbac.v1.RoleInitArgs:
    """The operators' Role in the namespace."""
    meta = k8s.meta.v1.ObjectMetaArgs(name=OPERATOR, namespace=namespace, labels=dict(labels))
    return k8s.rbac.v1.RoleInitArgs(metadata=meta, rules=_rules(OPERATOR_RULES))


def binding(
    namespace: str, labels: Mapping[str, str], bound: Sequence[k8s.rbac.v1.SubjectArgs]
) -> k8s.rbac.v1.RoleBindingInitArgs:
    """Binds the operators to their Role."""
    return k8s.rbac.v1.RoleBindingInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=OPERATOR, namespace=namespace, labels=dict(labels)),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group=RBAC_GROUP, kind="Role", name=OPERATOR),
        subjects=list(bound),
    )


def node_role(namespace: str, labels: Mapping[str, str]) -> k8s.rbac.v1.ClusterRoleInitArgs:
    """The operators' ClusterRole for the runbooks' node steps."""
    meta = k8s.meta.v1.ObjectMetaArgs(name=operator_nodes_name(namespace), labels=dict(labels))
    return k8s.rbac.v1.ClusterRoleInitArgs(metadata=meta, rules=_rules(NODE_RULES))


def node_binding(
    namespace: str, labels: Mapping[str, str], bound: Sequence[k8s.rbac.v1.SubjectArgs]
) -> k8s.rbac.v1.ClusterRoleBindingInitArgs:
    """Binds the operators to their ClusterRole."""
    name = operator_nodes_name(namespace)
    return k8s.rbac.v1.ClusterRoleBindingInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=name, labels=dict(labels)),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group=RBAC_GROUP, kind="ClusterRole", name=name),
        subjects=list(bound),
    )


NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
"""The label GKE gives every node of a node pool."""
PERFORM_LABEL = "cloud.google.com/perform-maintenance"
"""GKE's label that starts a node's pending host maintenance (the only label the operators may change)."""


def node_validations(pools: Sequence[str]) -> list[tuple[str, str]]:
    """``(expression, message)``: the node is one of ``pools``, and no label but the maintenance label changes."""
    pool, perform = f"'{NODE_POOL_LABEL}'", f"'{PERFORM_LABEL}'"
    old, new = "oldObject.metadata.labels", "object.metadata.labels"
    return [
        (
            f"has(oldObject.metadata.labels) && {pool} in {old} && {old}[{pool}] in {cel_list(pools)}",
            f"the operators may change only the nodes of their node pools: {', '.join(pools)}",
        ),
        (
            f"has(object.metadata.labels) && {new}.all(k, k == {perform} || (k in {old} && {old}[k] == {new}[k])) && "
            f"{old}.all(k, k == {perform} || k in {new})",
            f"the operators may change no node label but {PERFORM_LABEL}",
        ),
    ]


def _match(groups: Sequence[str], users: Sequence[str]) -> str:
    return (
        f"request.userInfo.groups.exists(g, g in {cel_list(groups)}) || request.userInfo.username in {cel_list(users)}"
    )


def node_policy(
    namespace: str, labels: Mapping[str, str], pools: Sequence[str], groups: Sequence[str], users: Sequence[str]
) -> k8s.admissionregistration.v1.ValidatingAdmissionPolicyInitArgs:
    """The policy on node updates by the operators (:func:`node_validations`): the request's user is one of
    ``users`` or in one of ``groups``, as the host-maintenance gate's policy (:mod:`tpu_serving.node_admission`)."""
    meta = k8s.meta.v1.ObjectMetaArgs(name=operator_nodes_name(namespace), labels=dict(labels))
    return node_update_policy(meta, ("the-operators", _match(groups, users)), node_validations(pools))


def node_policy_binding(
    namespace: str, labels: Mapping[str, str]
) -> k8s.admissionregistration.v1.ValidatingAdmissionPolicyBindingInitArgs:
    """Binds the policy, denying what it refuses."""
    name = operator_nodes_name(namespace)
    return policy_binding(k8s.meta.v1.ObjectMetaArgs(name=name, labels=dict(labels)), name)
