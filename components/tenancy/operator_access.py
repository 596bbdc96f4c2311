"""What the team that operates a variant may do in the cluster: enough to run the stack's runbooks
(``tpu-serving runbook``, docs/operate.md, docs/upgrade.md) and its alert pages' steps, and no more.

- In the serving namespace, a Role (:data:`OPERATOR_RULES`): observe, logs, port-forward, restart pods and workloads;
  read and patch the HPAs (the runbooks hold their scale-downs and move their bounds); evict pods (``kubectl
  drain``'s eviction).
- On the cluster, a ClusterRole (:data:`NODE_RULES`): read and patch nodes (cordon, uncordon, the out-of-service
  taint, GKE's ``cloud.google.com/perform-maintenance`` label), list pods and read DaemonSets in every namespace
  (``kubectl drain`` lists the node's pods and skips DaemonSets' with ``--ignore-daemonsets``). Its evictions stay
  in the serving namespace: a drain that meets another namespace's pod stops, Forbidden.
- Nothing outside the serving namespace but those node steps: the controllers, the metrics adapter and Managed
  Prometheus's collectors serve every tenant of the cluster, and the pages mark reading them as the cluster
  administrators' step (:mod:`tpu_serving.operations.alerts.page_steps`; on an existing cluster, the node steps too).
- The ClusterRole only on a cluster the stack creates, whose nodes are all its own. On an existing cluster, shared
  with other tenants, the nodes are its owner's: RBAC cannot name nodes by label, so a ClusterRole would let one
  tenant's on-call cordon or taint another's slice (GKE review round 54, M1), and an admission policy that held a
  group to one stack's pools refused every node change to a group that two stacks name, or that also administers the
  cluster (GKE review round 55, M1; SRE review round 19, M2, on the real API server). There the cluster owner runs
  the runbooks' node steps, or grants them.

GKE authorizes a request that either IAM or RBAC allows (cloud.google.com/kubernetes-engine/docs/concepts/
access-control); these grants are the RBAC half, scoped to the variant. The ``gcloud container`` half of the
runbooks (a node pool's upgrade, its autoscaling) needs IAM ``container.clusters.update`` on the cluster's project
(``roles/container.clusterAdmin`` holds it), which no Kubernetes object can grant (docs/security.md).

GKE review round 53, M1: the on-call group had none of the HPA, node or eviction rights the runbooks use; a
SubjectAccessReview on the real API server denied 6 of their 9 kubectl steps.
"""

from collections.abc import Mapping, Sequence

import pulumi_kubernetes as k8s

from ..common.naming import MAINTENANCE_GATE_STATE, OPERATOR, operator_nodes_name

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
    # delete: a JobSet failed for good (its maxRestarts spent) comes back only deleted, then pulumi up --refresh
    # (SRE review 31, M2; tpu_serving.operations.alerts.job_alerts' page), as a PathwaysJob does.
    (("jobset.x-k8s.io",), ("jobsets",), ("get", "list", "watch", "delete")),
    (("pathways-job.pathways.domain",), ("pathwaysjobs",), ("get", "list", "watch", "delete")),
    # The alert pages' first steps, read only (SRE review round 31, M1): the Gateway and its route
    # (gateway-api v1.3.0 config/crd/standard: gateways, httproutes), the InferencePool (gateway-api-inference-extension
    # v1.6.0 config/crd/bases/inference.networking.k8s.io_inferencepools.yaml), the PodMonitorings
    # (prometheus-engine v0.17.2 charts/operator/crds/monitoring.googleapis.com_podmonitorings.yaml) and the endpoint
    # picker's leader-election Lease, which it holds in its own namespace (components/traffic/epp.py, leader_election_rules).
    (("gateway.networking.k8s.io",), ("gateways", "httproutes"), ("get", "list", "watch")),
    (("inference.networking.k8s.io",), ("inferencepools",), ("get", "list", "watch")),
    (("monitoring.googleapis.com",), ("podmonitorings",), ("get", "list", "watch")),
    (("coordination.k8s.io",), ("leases",), ("get", "list", "watch")),
)
"""What operators of a variant may do in its namespace: observe (the alert pages' objects too), port-forward, restart
pods and workloads, hold and move the HPAs' bounds, evict for a drain. Creating or changing workloads stays with
``pulumi up``."""

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
    # The node upgrade runbook holds the host-maintenance gate's starts for its session through the gate's state
    # ConfigMap (SRE review 35, M1): that one object, by name
    hold = k8s.rbac.v1.PolicyRuleArgs(
        api_groups=[""], resources=["configmaps"], resource_names=[MAINTENANCE_GATE_STATE], verbs=["patch"]
    )
    return k8s.rbac.v1.RoleInitArgs(metadata=meta, rules=[*_rules(OPERATOR_RULES), hold])


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
