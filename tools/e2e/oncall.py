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
from dataclasses import dataclass, field

from tpu_serving.operations.alerts.page_steps import ADMIN_STEP

from .controlplane import ControlPlane


@dataclass(frozen=True)
class Request:
    """One API request: its verb, API group, resource (``pods/eviction``: a subresource) and namespace, and the object's
    name when the command names one (a Role may grant a verb on named objects only: the gate's state ConfigMap). The
    name is not part of a request's identity: two commands on one kind are one request to authorize without it."""

    verb: str
    group: str
    resource: str
    namespace: str | None = None
    name: str | None = field(default=None, compare=False)


RESOURCES = {
    **dict.fromkeys(("pods", "pod"), ("", "pods")),
    **dict.fromkeys(("nodes", "node"), ("", "nodes")),
    "events": ("", "events"),
    "hpa": ("autoscaling", "horizontalpodautoscalers"),
    **dict.fromkeys(("configmap", "configmaps"), ("", "configmaps")),
    **dict.fromkeys(("deploy", "deployment"), ("apps", "deployments")),
    **dict.fromkeys(("job", "jobs"), ("batch", "jobs")),
    "cronjob": ("batch", "cronjobs"),
    **dict.fromkeys(("leaderworkerset", "leaderworkersets", "lws"), ("leaderworkerset.x-k8s.io", "leaderworkersets")),
    **dict.fromkeys(("resourcequota", "resourcequotas", "quota"), ("", "resourcequotas")),
    **dict.fromkeys(("jobset", "jobsets"), ("jobset.x-k8s.io", "jobsets")),
    "pathwaysjob": ("pathways-job.pathways.domain", "pathwaysjobs"),
    "disaggregatedset": ("disaggregatedset.x-k8s.io", "disaggregatedsets"),
    "gateway": ("gateway.networking.k8s.io", "gateways"),
    "httproute": ("gateway.networking.k8s.io", "httproutes"),
    "inferencepool": ("inference.networking.k8s.io", "inferencepools"),
    **dict.fromkeys(("podmonitoring", "podmonitorings"), ("monitoring.googleapis.com", "podmonitorings")),
    "lease": ("coordination.k8s.io", "leases"),
    "apiservice": ("apiregistration.k8s.io", "apiservices"),
}
"""kubectl's names of the resources the runbooks and pages name (its short names, singular and plural) and their
API group and resource, as the upstream CRDs name them (docs/security.md cites them)."""
CLUSTER_SCOPED = {"nodes", "apiservices"}
NODE_STEPS = {"cordon", "uncordon", "drain", "taint", "label"}
PAGE_STEP = re.compile(r"`(kubectl [^`]*)`( " + re.escape(ADMIN_STEP) + ")?")
"""A page's command, in backticks, and the phrase that marks it as not the operators' (:mod:`tpu_serving.operations.alerts.page_steps`)."""


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


def _resources(name: str, words: list[str]) -> list[tuple[str, str]]:
    """The (group, resource) of each of ``name``'s comma-separated kinds (kubectl's ``get a,b``)."""
    kinds = name.split(",")
    if not all(k in RESOURCES for k in kinds):
        raise ValueError(f"a kubectl step this module does not know: kubectl {' '.join(words)}")
    return [RESOURCES[k] for k in kinds]


def _pod_step(verb: str, target: str, namespace: str | None) -> set[Request]:
    """``logs`` and ``port-forward``: kubectl reads the named object (``kind/name``: the object, then its pods by
    its selector; ``-l``: the pods it selects), then the pod's log or port-forward subresource."""
    kind, _, _ = target.partition("/") if "/" in target else ("pod", "", "")
    group, resource = RESOURCES[kind]
    found = {Request("get", group, resource, namespace), Request("list", "", "pods", namespace)}
    found.add(Request("get", "", "pods", namespace))
    sub = (
        Request("get", "", "pods/log", namespace)
        if verb == "logs"
        else Request("create", "", "pods/portforward", namespace)
    )
    return found | {sub}


def _step(words: list[str], namespace: str | None, serving: str) -> set[Request]:
    """The requests of one kubectl command (``words`` after ``kubectl``, ``-n NS`` removed); a drain evicts the
    serving pods of the node, in ``serving``. ``describe`` also lists the namespace's events."""
    verb = words[0]
    if verb in NODE_STEPS:
        return _node_step(verb, namespace or serving)
    if verb in ("logs", "port-forward") and len(words) > 1:
        return _pod_step(verb, words[1] if not words[1].startswith("-") else "pod", namespace)
    if verb not in ("get", "patch", "wait", "describe", "delete") or len(words) < 2:
        raise ValueError(f"a kubectl step this module does not know: kubectl {' '.join(words)}")
    found: set[Request] = set()
    for group, resource in _resources(words[1], words):
        where = None if resource in CLUSTER_SCOPED else namespace
        if verb in ("patch", "delete"):
            name = words[2] if len(words) > 2 and not words[2].startswith("-") else None
            found |= {Request("get", group, resource, where, name), Request(verb, group, resource, where, name)}
            continue
        watched = verb == "wait" or "-w" in words
        found |= {Request("list", group, resource, where), Request("get", group, resource, where)}
        found |= {Request("watch", group, resource, where)} if watched else set()
    return found | ({Request("list", "", "events", namespace)} if verb == "describe" else set())


def command_requests(command: str, serving: str) -> set[Request]:
    """The requests of one kubectl command line (``kubectl ...``; quoted selectors and bodies are not read)."""
    words = command.split()[1:]
    namespace = _namespace(words)
    if namespace is not None:
        at = words.index("-n")
        words = words[:at] + words[at + 2 :]
    return _step(words, namespace, serving)


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
            found |= command_requests(command, serving)
    return found


def page_commands(content: str) -> list[tuple[str, bool]]:
    """Each kubectl command of an alert page (its ``documentation.content``) and whether the page marks it as the
    cluster administrators'; a ``kubectl`` outside backticks is refused (the page would hide a command)."""
    if "kubectl" in PAGE_STEP.sub("", content):
        raise ValueError(f"a kubectl command outside backticks: {content}")
    return [(m.group(1), m.group(2) is not None) for m in PAGE_STEP.finditer(content)]


def allowed(cp: ControlPlane, request: Request, user: str, groups: list[str]) -> bool:
    """The API server's answer to a SubjectAccessReview of ``request`` by ``user`` in ``groups``."""
    resource, _, subresource = request.resource.partition("/")
    attributes = {"verb": request.verb, "group": request.group, "resource": resource}
    if subresource:
        attributes["subresource"] = subresource
    if request.namespace is not None:
        attributes["namespace"] = request.namespace
    if request.name is not None:
        attributes["name"] = request.name
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": [*groups, "system:authenticated"], "resourceAttributes": attributes},
    }
    return bool(cp.kube.create(review).get("status", {}).get("allowed"))
