"""The runbook's header lines on who may run it and what it covers (:mod:`tpu_serving_tools.runbook.command`)."""

from __future__ import annotations

from tpu_serving_tools.runbook.names import Names


def rights(n: Names) -> str:
    """Who may run the kubectl steps: the stack's operator Role and ClusterRole, or, for a program that declares
    neither, whoever holds the namespace's and the nodes' rights."""
    if not n.operator_role:
        return (
            f"# kubectl steps: this program binds no operators (TenancyArgs.operator_groups or operator_users, a stack"
            f" file's tenancy.operators, do); they need"
            f" the rights of namespace {n.namespace} and, for the node steps (cordon, drain, taint, label), the"
            " nodes'; gcloud steps need IAM (docs/security.md)"
        )
    return (
        f"# kubectl steps: the Role {n.namespace}/tpu-serving-operator grants the namespace's to tenancy.operators; "
        + (
            "the node steps (cordon, drain, taint, label, even reading nodes) are the cluster owner's on an existing"
            " cluster"
            if n.existing
            else f"the ClusterRole {n.namespace}-tpu-serving-operator the node steps"
            if n.operator_nodes
            else "the plan names no operators, so no ClusterRole grants the node steps (cordon, drain, taint, label):"
            " they need the nodes' rights (TenancyArgs.operator_groups or operator_users grants them)"
        )
        + "; gcloud steps need IAM (docs/security.md)"
    )


def access_lines(n: Names) -> list[str]:
    """Who may run the kubectl steps (:func:`rights`), and, for a plan that serves several workloads, which one
    the runbook covers (library review 1, M3)."""
    lines = [rights(n)]
    if n.others:
        lines.append(
            f"# Not covered: this plan also serves {', '.join(n.others)}; the waits, drains and holds below are "
            f"{n.namespace}/{n.workload}'s only, on its own TPU pools, and a pool of another workload upgraded or "
            "maintained takes its groups down without them: `tpu-serving runbook --workload <namespace>/<name>` "
            "writes each one's"
        )
    return lines
