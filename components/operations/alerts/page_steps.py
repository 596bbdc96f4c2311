"""The kubectl steps of the alert pages (each policy's ``documentation.content``): every command in backticks, and
one the operators' RBAC (:mod:`tpu_serving.tenancy.operator_access`) does not grant followed by :data:`ADMIN_STEP`, so that
the on-call reading the page knows whom to ask, and a test can tell the two apart (SRE review round 31, M1: the
pages' first commands were Forbidden to the on-call group, unsaid).

Not the operators': reading the controllers, the metrics adapter and Managed Prometheus's collectors, which run
outside the serving namespace and serve every tenant of the cluster (``lws-system``, ``jobset-system``,
``custom-metrics``, GKE's own ``gmp-system``), and on an existing (shared) cluster every cluster-scoped step (its
nodes are its owner's: :mod:`tpu_serving.tenancy.operator_access`, docs/existing-cluster.md)."""

import re

ADMIN_STEP = "(a cluster administrator's step)"
"""The fixed phrase that follows a page's command the operators may not run."""


def step(command: str, *, admin: bool = False) -> str:
    """``command`` as a page shows it: in backticks, followed by :data:`ADMIN_STEP` when it is not the operators'."""
    return f"`{command}`" + (f" {ADMIN_STEP}" if admin else "")


_CLUSTER_SCOPED = re.compile(r"`kubectl(?![^`]*\s-n\s)\s[^`]*`(?! " + re.escape(ADMIN_STEP) + ")")


def on_shared_cluster(content: str) -> str:
    """A page of a stack on an existing cluster: its cluster-scoped commands (``kubectl get nodes``, a drain) marked
    as the cluster administrators' (the stack grants no ClusterRole there)."""
    return _CLUSTER_SCOPED.sub(lambda m: f"{m.group(0)} {ADMIN_STEP}", content)
