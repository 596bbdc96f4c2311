"""Whether the operators a stack names may run the kubectl steps of its runbooks, asked of the real API server.

:func:`runbook_requests` reads ``tpu-serving runbook``'s output and turns each ``kubectl`` line into the API requests
kubectl makes for it (below); :func:`allowed` asks the API server's authorizer with a SubjectAccessReview
(``authorization.k8s.io/v1``) for a user in the operators' group. The RBAC objects come from the stack's plan.

What kubectl asks of the API for each step (kubectl's own requests, as ``-v=6`` prints them; ``kubectl drain``
lists the node's pods in every namespace, reads the DaemonSet of each pod it skips with ``--ignore-daemonsets``, and
evicts the rest through ``pods/eviction``: https://kubernetes.io/docs/reference/kubectl/generated/kubectl_drain/):
cordon and uncordon list the selected nodes and patch each; ``label nodes -l`` and ``taint nodes`` read and patch
them; ``get -w`` and ``wait`` list and watch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .controlplane import ControlPlane


@dataclass(frozen=True)
class Request:
    """One API request: its verb, API group, resource (``pods/eviction``: a subresource) and namespace."""

    verb: str
    group: str
    resource: str
    namespace: str | None = None


RESOURCES = {
    "hpa": ("autoscaling", "horizontalpodautoscalers"),
    "leaderworkerset": ("leaderworkerset.x-k8s.io", "leaderworkersets"),
    "lws": ("leaderworkerset.x-k8s.io", "leaderworkersets"),
    "pods": ("", "pods"),
    "pod": ("", "pods"),
    "nodes": ("", "nodes"),
    "jobset": ("jobset.x-k8s.io", "jobsets"),
    "pathwaysjob": ("pathways-job.pathways.domain", "pathwaysjobs"),
    "disaggregatedset": ("disaggregatedset.x-k8s.io", "disaggregatedsets"),
}
NODE_STEPS = {"cordon", "uncordon", "drain", "taint", "label"}


def _namespace(words: list[str]) -> str | None:
    return words[words.index("-n") + 1] if "-n" in words else None


def _node_step(verb: str, namespace: str | None) -> set[Request]:
    nodes = {Request("list", "", "nodes"), Request("get", "", "nodes"), Request("patch", "", "nodes")}
    if verb != "drain":
        return nodes
    return nodes | {
        Request("list", "", "pods"),
        Request("get", "apps", "daemonsets"),
        Request("create", "", "pods/eviction", namespace),
    }


def _step(words: list[str], namespace: str | None, serving: str) -> set[Request]:
    """The requests of one kubectl command (``words`` after ``kubectl``, ``-n NS`` removed); a drain evicts the
    serving pods of the node, in ``serving``."""
    verb = words[0]
    if verb in NODE_STEPS:
        return _node_step(verb, namespace or serving)
    if verb not in ("get", "patch", "wait", "describe", "delete") or len(words) < 2 or words[1] not in RESOURCES:
        raise ValueError(f"a kubectl step this module does not know: kubectl {' '.join(words)}")
    group, resource = RESOURCES[words[1]]
    if verb in ("patch", "delete"):
        return {Request("get", group, resource, namespace), Request(verb, group, resource, namespace)}
    watched = verb == "wait" or "-w" in words
    found = {Request("list", group, resource, namespace), Request("get", group, resource, namespace)}
    return found | ({Request("watch", group, resource, namespace)} if watched else set())


def runbook_requests(runbook: str, serving: str) -> set[Request]:
    """Every request the ``kubectl`` lines of ``runbook`` (``tpu-serving runbook``'s output) make; ``serving``: the
    serving namespace, whose pods a drain evicts."""
    found: set[Request] = set()
    for line in runbook.splitlines():
        text = re.sub(r"\s+#.*$", "", line.strip())
        if text.startswith("#"):
            continue
        # every kubectl of the line: at its start, in $(...) or after until (the runbook's waits are loops), up to the
        # next pipe, ; or &&
        for command in re.findall(r"(?:^|\$\(|\buntil\s)\s*(kubectl\s[^|;&]*)", text):
            words = command.split()[1:]  # the verb and resource lead; quoted selectors and bodies are not read
            namespace = _namespace(words)
            if namespace is not None:
                at = words.index("-n")
                words = words[:at] + words[at + 2 :]
            found |= _step(words, namespace, serving)
    return found


def allowed(cp: ControlPlane, request: Request, user: str, groups: list[str]) -> bool:
    """The API server's answer to a SubjectAccessReview of ``request`` by ``user`` in ``groups``."""
    resource, _, subresource = request.resource.partition("/")
    attributes = {"verb": request.verb, "group": request.group, "resource": resource}
    if subresource:
        attributes["subresource"] = subresource
    if request.namespace is not None:
        attributes["namespace"] = request.namespace
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": [*groups, "system:authenticated"], "resourceAttributes": attributes},
    }
    return bool(cp.kube.create(review).get("status", {}).get("allowed"))
