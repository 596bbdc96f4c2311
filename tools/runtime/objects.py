"""``objects``: the objects the controllers create that the plan never declares, and what collides with them,
for the controllers ``make e2e`` cannot run (DisaggregatedSet on LWS v0.10.0, PathwaysJob).

A controller that finds an object of the name it wants already there does not create its own: a
Service of ours named like a LeaderWorkerSet takes the place of the headless Service that gives the
group's pods their DNS names. Each controller-created object is modelled from the controller's source,
and a declared object of the same kind, namespace and name fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving.operations.alerts import cluster_notices, controller_alerts
from tpu_serving_tools.runtime import alert_jobs, class_refs, health_checks, maintenance_pages, pods_ds
from tpu_serving_tools.runtime import ds_facts as D
from tpu_serving_tools.runtime.gcp_facts import ALERT_POLICY
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import CategoryResult, Finding

LWS_HEADLESS = (
    "kubernetes-sigs/lws@v0.10.0 pkg/utils/controller/controller_utils.go:33-60 (CreateHeadlessServiceIfNotExists: "
    "a headless Service named after the LeaderWorkerSet, created only when no Service of that name exists)"
)
JOBSET_HEADLESS = (
    "kubernetes-sigs/jobset@v0.12.0 pkg/controllers/jobset_controller.go:790-813 (createHeadlessSvcIfNecessary: "
    "a headless Service named GetSubdomain(js), :1090-1098 spec.network.subdomain or the JobSet's name, when "
    "enableDNSHostnames, which pkg/webhooks/jobset_webhook.go:133-134 defaults to true; created only when none exists)"
)
DS_PRV = (
    "kubernetes-sigs/lws@v0.10.0 pkg/controllers/disaggregatedset/service_manager.go:106-162 (a headless Service "
    "<child LWS>-prv per role once the revision is ready on every role; an existing one is kept, :115-119)"
)
DS_SCALER = (
    "kubernetes-sigs/lws@v0.10.0 pkg/controllers/disaggregatedset/scaler_manager.go:57, :103-161 (a "
    "DisaggregatedSetRoleScaler <ds>-<role> per External role; one of that name it does not control is not adopted)"
)
PATHWAYSJOB_JOBSET = (
    "google/pathways-job@v0.1.4 internal/controller/pathwaysjob_controller.go:228-280 (createJobSet: a JobSet "
    "named after the PathwaysJob, pw.GetName(), in its namespace)"
)


@dataclass(frozen=True)
class Created:
    """An object a controller creates for a declared owner."""

    kind: str
    namespace: str
    name: str
    owner: str
    source: str
    why: str
    """What breaks when it is not created."""


def _jobset_service(js: Mapping[str, Any], owner: str, source: str) -> Iterator[Created]:
    network = js.get("spec", {}).get("network") or {}
    if network.get("enableDNSHostnames", True) is False:
        return
    name = network.get("subdomain") or js["metadata"]["name"]
    why = "the JobSet's pods lose their DNS hostnames (<job>-<index>.<subdomain>)"
    yield Created("Service", js["metadata"].get("namespace", "default"), name, owner, source, why)


def _disaggregatedset_objects(view: PlanView) -> list[Created]:
    """Per child LeaderWorkerSet its headless Service (LWS) and its ``-prv`` Service (DisaggregatedSet controller),
    per External role its scaler."""
    out = []
    for ds in view.kubernetes_objects(D.DS_KIND):
        name = ds["metadata"]["name"]
        for c in pods_ds.children(ds):
            why = f"per-pod DNS of role {c.role} ({c.name}-0.{c.name}.<namespace>, LWS_LEADER_ADDRESS) never resolves"
            owner = f"LeaderWorkerSet/{c.name} (of DisaggregatedSet/{name})"
            out.append(Created("Service", c.namespace, c.name, owner, LWS_HEADLESS, why))
            why = f"the plan's Service stands in for role {c.role}'s revision Service, with its own selector"
            out.append(Created("Service", c.namespace, c.name + D.PRV_SUFFIX, f"DisaggregatedSet/{name}", DS_PRV, why))
        for role in (ds.get("spec") or {}).get("roles") or ():
            if pods_ds.is_external(role):
                ns, scaler = ds["metadata"].get("namespace", "default"), pods_ds.scaler_name(name, role["name"])
                why = f"role {role['name']} gets no scaler: its LeaderWorkerSet is created with 0 replicas"
                out.append(Created(D.SCALER_KIND, ns, scaler, f"DisaggregatedSet/{name}", DS_SCALER, why))
    return out


def created_objects(view: PlanView) -> list[Created]:
    """Every object the DisaggregatedSet and PathwaysJob controllers create for the plan's objects (with the Services
    the LWS and JobSet controllers make for their children). A LeaderWorkerSet's and a JobSet's own headless Service
    are not modelled: ``make e2e`` runs those controllers, and ``tpu-serving verify`` checks each Service exists,
    headless and owned by its workload (a Service of ours in its place fails there)."""
    out = _disaggregatedset_objects(view)
    for pw in view.kubernetes_objects("PathwaysJob"):
        meta = pw["metadata"]
        owner, ns = f"PathwaysJob/{meta['name']}", meta.get("namespace", "default")
        out.append(Created("JobSet", ns, meta["name"], owner, PATHWAYSJOB_JOBSET, "the PathwaysJob never runs"))
        generated = {"metadata": {"name": meta["name"], "namespace": ns}, "spec": {}}
        out += _jobset_service(generated, f"{owner} (its JobSet)", JOBSET_HEADLESS)
    return out


def declared_objects(view: PlanView) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of every Kubernetes object the plan declares."""
    return {
        (str(o["kind"]), str(o["metadata"].get("namespace", "default")), str(o["metadata"]["name"]))
        for o in view.kubernetes_objects()
        if isinstance(o.get("metadata"), Mapping) and "name" in o["metadata"]
    }


def findings(view: PlanView) -> list[Finding]:
    """One finding per controller-created object: created, or kept from being created by a declared one."""
    declared = declared_objects(view)
    out = []
    for c in created_objects(view):
        subject = f"object {c.kind} {c.namespace}/{c.name} of {c.owner}"
        if (c.kind, c.namespace, c.name) in declared:
            out.append(
                Finding(
                    subject,
                    False,
                    f"the plan declares a {c.kind} of that name, so the controller does not "
                    f"create its own: {c.why} ({c.source})",
                )
            )
        else:
            out.append(Finding(subject, True, "created by its controller; nothing declared in its place"))
    return out + pods_ds.admission_findings(list(view.kubernetes_objects(D.DS_KIND)))


def check(view: PlanView) -> CategoryResult:
    from tpu_serving_tools.runtime import cluster_wiring, wiring  # wiring builds on the scheduling model

    found = (
        findings(view)
        + reference_findings(view)
        + duplicate_findings(view)
        + alert_jobs.findings(view)
        + alert_jobs.picker_findings(view)
        + maintenance_pages.findings(view)
        + maintenance_pages.gate_page_findings(view)
        + maintenance_pages.unpaged_findings(view)
        + maintenance_pages.fallback_ticket_findings(view)
        + alert_jobs.autoscaler_findings(view)
    )
    return CategoryResult("objects", found + wiring.findings(view) + cluster_wiring.findings(view))


HPA_TARGET = (
    "an HPA scales its scaleTargetRef only (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/"
    "horizontal-pod-autoscaler-v2/: 'scaleTargetRef points to the target resource to scale'); a LeaderWorkerSet left "
    "to its HPA declares no replicas and keeps the API's default of 1 group"
)
ROUTE_BACKEND = (
    "an HTTPRoute's backendRefs name Services of its namespace unless kind says otherwise (Gateway API v1.3.0 "
    "BackendObjectReference: kind defaults to Service); a missing one is ResolvedRefs False and its requests get 500"
)


GATE_REFERENCE = (
    "the host-maintenance gate reads and patches these by name (HostMaintenanceGateArgs.leader_worker_sets, "
    "autoscalers: its Role's resourceNames); an HPA is named after its target (ServingAutoscaler.hpa_name): a name of "
    "nothing leaves the gate's cover of a lost group a 404"
)
PODMONITORING_SELECTS = (
    "a PodMonitoring scrapes the pods of its namespace its selector matches (Managed Service for Prometheus, "
    "PodMonitoring spec.selector); one that matches none collects nothing, and the alerts on its metrics never fire"
)


def _gate_references(view: PlanView) -> Iterator[tuple[str, str, str, str, str]]:
    """The LeaderWorkerSets and HPAs each host-maintenance gate CronJob names in its environment."""
    from tpu_serving_tools.runtime.maintenance import gate_environments  # builds on the scheduling model

    for ns, name, _, env in gate_environments(view):
        for var, kind in (("LEADER_WORKER_SETS", "LeaderWorkerSet"), ("AUTOSCALERS", "HorizontalPodAutoscaler")):
            for target in (x for x in env.get(var, "").split(",") if x):
                yield f"CronJob {ns}/{name}", kind, ns, target, GATE_REFERENCE


def _references(view: PlanView) -> Iterator[tuple[str, str, str, str, str]]:
    """(referrer, kind, namespace, name, source) of each object an HPA, an HTTPRoute or a host-maintenance gate of
    the plan names."""
    yield from _gate_references(view)
    for hpa in view.kubernetes_objects("HorizontalPodAutoscaler"):
        meta, ref = hpa["metadata"], (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        ns = str(meta.get("namespace", "default"))
        yield f"HorizontalPodAutoscaler {ns}/{meta['name']}", str(ref.get("kind")), ns, str(ref.get("name")), HPA_TARGET
    for route, ref in _route_backends(view):
        meta = route["metadata"]
        ns = str(meta.get("namespace", "default"))
        kind, where = str(ref.get("kind") or "Service"), str(ref.get("namespace") or ns)
        yield f"HTTPRoute {ns}/{meta['name']}", kind, where, str(ref.get("name")), ROUTE_BACKEND


def _route_backends(view: PlanView) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """(HTTPRoute, backendRef) of every backend the plan's routes send to."""
    for route in view.kubernetes_objects("HTTPRoute"):
        for rule in (route.get("spec") or {}).get("rules") or ():
            for ref in rule.get("backendRefs") or ():
                yield route, ref


ROUTE_TO_HEADLESS = (
    "the LeaderWorkerSet's own headless Service, which its controller creates with clusterIP None, no ports and "
    "publishNotReadyAddresses true over every pod of the set, workers and loading leaders included "
    "(kubernetes-sigs/lws@v0.10.0 pkg/utils/controller/controller_utils.go l.33-60): a route's port on it resolves to "
    "nothing, and would reach pods that do not serve; route to the serving Service (VllmServingArgs.service_name)"
)


def _route_findings(view: PlanView) -> list[Finding]:
    """Each HTTPRoute backend that is a Service is one the plan declares, with the port the route names: a route to a
    LeaderWorkerSet's controller-made headless Service resolves as a name, and serves nothing (library review 6,
    M2)."""
    services = {
        (str(o["metadata"].get("namespace", "default")), str(o["metadata"]["name"])): o
        for o in view.kubernetes_objects("Service")
    }
    declared = declared_objects(view)
    out = []
    for route, ref in _route_backends(view):
        if str(ref.get("kind") or "Service") != "Service" or str(ref.get("group") or "") not in ("", "core"):
            continue
        meta = route["metadata"]
        ns = str(ref.get("namespace") or meta.get("namespace", "default"))
        key, port = (ns, str(ref.get("name"))), ref.get("port")
        subject = f"ref HTTPRoute {meta.get('namespace', 'default')}/{meta['name']} -> Service {ns}/{ref.get('name')} port {port}"
        service = services.get(key)
        if service is None:
            if ("LeaderWorkerSet", *key) in declared:
                out.append(Finding(subject, False, ROUTE_TO_HEADLESS))
            continue  # a name of nothing: the reference finding says so
        ports = sorted(int(p["port"]) for p in (service.get("spec") or {}).get("ports") or () if "port" in p)
        ok = port is None or int(port) in ports
        why = (
            f"a port of the Service ({', '.join(map(str, ports))})"
            if ok
            else (
                f"the Service has no port {port} (its ports: {', '.join(map(str, ports)) or 'none'}): the route's "
                "backend does not resolve (Gateway API v1.3.0 BackendRef.port: 'the destination port number to use for "
                "this resource'), and its requests get 500"
            )
        )
        out.append(Finding(subject, ok, why))
    return out


def reference_findings(view: PlanView) -> list[Finding]:
    """Each object an HPA scales or an HTTPRoute sends to is one the plan declares or a controller creates (a
    LeaderWorkerSet's headless Service, named after it, included): a name that resolves to nothing passes no other
    category, it only shrinks their counts (library review 3, M1 and M2)."""
    there = declared_objects(view)
    there |= {(c.kind, c.namespace, c.name) for c in created_objects(view)}
    there |= {("Service", ns, name) for kind, ns, name in set(there) if kind == "LeaderWorkerSet"}  # LWS_HEADLESS
    out = []
    for referrer, kind, ns, name, source in _references(view):
        subject = f"ref {referrer} -> {kind} {ns}/{name}"
        ok = (kind, ns, name) in there
        why = "declared in the plan, or created by its controller" if ok else f"the plan has no such object: {source}"
        out.append(Finding(subject, ok, why))
    return (
        out
        + _route_findings(view)
        + _fixed_targets(view)
        + _selector_findings(view)
        + _gate_pool_findings(view)
        + class_refs.findings(view)
        + health_checks.findings(view)
    )


GATE_POOLS = (
    "the gate selects and labels nodes by their pool (HostMaintenanceGateArgs.pools: the GKE pool names, "
    "cloud.google.com/gke-nodepool), and its ValidatingAdmissionPolicy admits its label on those pools only: a name of "
    "no pool guards nothing"
)


def _gate_pool_findings(view: PlanView) -> list[Finding]:
    """Each pool a host-maintenance gate names is a node pool of the plan, created or an ``ExistingTpuNodePool``
    (library review 7, M2: a typo was only the maintenance category's warning)."""
    from tpu_serving_tools.runtime.maintenance import gate_environments  # builds on the scheduling model
    from tpu_serving_tools.runtime.scheduling import node_pools

    pools = {p.name for p in node_pools(view)}
    return [
        Finding(
            f"ref CronJob {ns}/{name} -> node pool {pool}",
            pool in pools,
            "a node pool of the plan"
            if pool in pools
            else f"the plan has no such node pool (its pools: {', '.join(sorted(pools)) or 'none'}): {GATE_POOLS}",
        )
        for ns, name, _, env in gate_environments(view)
        for pool in (x for x in env.get("POOLS", "").split(",") if x)
    ]


def _fixed_targets(view: PlanView) -> list[Finding]:
    """An HPA's LeaderWorkerSet declares no ``replicas``: one it declares, every ``pulumi up`` sets back under the
    HPA (library review 4, M2)."""
    lws = {
        (str(o["metadata"].get("namespace", "default")), str(o["metadata"]["name"])): o
        for o in view.kubernetes_objects("LeaderWorkerSet")
    }
    out = []
    for hpa in view.kubernetes_objects("HorizontalPodAutoscaler"):
        ns = str(hpa["metadata"].get("namespace", "default"))
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        target = lws.get((ns, str(ref.get("name")))) if ref.get("kind") == "LeaderWorkerSet" else None
        if target is None:
            continue
        fixed = (target.get("spec") or {}).get("replicas")
        subject = (
            f"ref HorizontalPodAutoscaler {ns}/{hpa['metadata']['name']} owns the groups of {ns}/{ref.get('name')}"
        )
        why = (
            f"the LeaderWorkerSet declares spec.replicas {fixed}: every pulumi up sets the groups back to it under the "
            "HPA; give the serving autoscaled=True (VllmServingArgs), which leaves the count to the HPA"
            if fixed is not None
            else "the LeaderWorkerSet declares no replicas: the count is the HPA's"
        )
        out.append(Finding(subject, fixed is None, why))
    return out + _unscaled(view, lws)


def _unscaled(view: PlanView, lws: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[Finding]:
    """A LeaderWorkerSet that leaves its group count to an HPA (no ``spec.replicas``: ``autoscaled=True``) that no
    HPA targets runs one group: the CRD defaults ``replicas`` to 1 (lws v0.10.0 leaderworkersets CRD,
    ``spec.replicas`` ``default: 1``), whatever ``replicas`` the serving was given (library review 13, M1)."""
    targeted = {
        (str(h["metadata"].get("namespace", "default")), str(ref.get("name")))
        for h in view.kubernetes_objects("HorizontalPodAutoscaler")
        if (ref := (h.get("spec") or {}).get("scaleTargetRef") or {}).get("kind") == "LeaderWorkerSet"
    }
    return [
        Finding(
            f"ref LeaderWorkerSet {ns}/{name} leaves its group count to an HPA",
            False,
            "no HorizontalPodAutoscaler of the plan targets it, and the LeaderWorkerSet declares no replicas, which "
            "the CRD defaults to 1 (lws v0.10.0 leaderworkersets CRD, spec.replicas default 1): it runs one group; "
            "add its ServingAutoscaler, or give the serving autoscaled=False",
        )
        for (ns, name), o in sorted(lws.items())
        if (o.get("spec") or {}).get("replicas") is None and (ns, name) not in targeted
    ]


SELECTS = {
    "PodMonitoring": PODMONITORING_SELECTS,
    "InferencePool": (
        "an InferencePool's endpoints are the pods of its namespace its selector matches (gateway-api-inference-extension "
        "v1.3.0 api/v1/inferencepool_types.go, InferencePoolSpec.Selector: 'Selector determines which Pods are members "
        "of this inference pool'); one that matches none leaves the Gateway no endpoint, and every request fails"
    ),
    "Service": (
        "a Service's endpoints are the pods of its namespace its selector matches "
        "(https://kubernetes.io/docs/concepts/services-networking/service/); one that matches none has no endpoints, "
        "and its clients get connection refused"
    ),
}
"""Why each selecting kind must select a pod of the plan."""


def _selector_findings(view: PlanView) -> list[Finding]:
    """Every PodMonitoring, InferencePool and selecting Service selects a pod of its namespace (library review 4, M3:
    another workload's metrics given to a namespace's Observability; library review 6, M1: a gateway's pool selecting
    nothing)."""
    from tpu_serving_tools.runtime.network_policy import label_selector, selector_matches
    from tpu_serving_tools.runtime.pods import pods_of

    pods = pods_of(view)
    out = []
    for kind, source in SELECTS.items():
        for obj in view.kubernetes_objects(kind):
            selector = label_selector(obj)
            if selector is None:
                continue
            ns = str(obj["metadata"].get("namespace", "default"))
            chosen = sorted({p.owner for p in pods if p.namespace == ns and selector_matches(selector, p.labels)})
            subject = f"ref {kind} {ns}/{obj['metadata']['name']} -> pods"
            why = f"selects pods of {', '.join(chosen)}" if chosen else f"selects no pod of the plan: {source}"
            out.append(Finding(subject, bool(chosen), why))
    return out


ALREADY_EXISTS = (
    "the second create fails with AlreadyExists: pulumi-kubernetes v4.29.0 and later create an object with a "
    "client-side create (pulumi/pulumi-kubernetes#4278, provider/pkg/await/await.go Creation; upsertExistingObjects "
    "off)"
)
"""Why a plain declaration beside another of the same object fails ``pulumi up``."""


def _is_patch(r: Mapping[str, Any]) -> bool:
    """A Patch resource (``kubernetes:<group>/<version>:<Kind>Patch``): created by a server-side apply of its own field
    manager, which shares the fields other declarations apply with the same values."""
    return str(r.get("type", "")).endswith("Patch")


def duplicate_findings(view: PlanView) -> list[Finding]:
    """Each Kubernetes object two resources of the plan declare through one provider (two ``Tenancy`` of one cluster
    each declaring the PriorityClasses). Patch resources may share it (a server-side apply each, under its own field
    manager), and retained on delete none deletes it, as ``TenancyArgs(shared_cluster=True)`` declares the
    PriorityClasses; a plain declaration beside any other is created with a client-side create, which the API server
    refuses with AlreadyExists once the object exists, and destroying it deletes the object the others' pods name
    (library review 3, M5; tests/e2e/test_e2e_shared_tenancy.py shows both on a real API server)."""
    seen: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = {}
    for r in view.resources:
        inputs = r.get("inputs") or {}
        meta = inputs.get("metadata")
        if not str(r.get("type", "")).startswith("kubernetes:") or not isinstance(meta, Mapping) or "name" not in meta:
            continue
        key = (str(r.get("provider", "")), str(inputs.get("kind")), str(meta.get("namespace", "")), str(meta["name"]))
        seen.setdefault(key, []).append(r)
    out = []
    for (_, kind, ns, name), rs in sorted(seen.items()):
        if len(rs) > 1:
            shared = all(_is_patch(r) for r in rs)
            out.append(Finding(f"declared twice {kind} {ns + '/' if ns else ''}{name}", shared, _duplicate_why(rs)))
    return out + _duplicate_alerts(view)


def _duplicate_why(rs: list[Mapping[str, Any]]) -> str:
    """Why the declarations ``rs`` of one object may share it (all Patch resources), or why not."""
    who = ", ".join(str(r["name"]) for r in rs)
    if all(_is_patch(r) for r in rs):
        return f"declared by {who}, each a Patch resource (a server-side apply of its own field manager): " + (
            "retained on delete, a destroy of one leaves it to the others"
            if all(r.get("retainOnDelete") for r in rs)
            else "a destroy of one relinquishes its fields to the others (the last one's is refused where the "
            "object cannot lose them: a PriorityClass's value and preemptionPolicy are immutable)"
        )
    plain = [str(r["name"]) for r in rs if not _is_patch(r)]
    return (
        f"declared by {who}; {', '.join(plain)} {'is a plain declaration' if len(plain) == 1 else 'are plain declarations'}"
        f": {ALREADY_EXISTS}, and a destroy of it deletes the object the others' pods and policies name; declare it "
        "once, or declare each as a Patch resource retained on delete (TenancyArgs.shared_cluster for the "
        "PriorityClasses)"
    )


ONCE_ARGUMENTS = {
    cluster_notices.KEY: "ObservabilityArgs.upgrade_notices",
    controller_alerts.KEY: "ObservabilityArgs.controllers",
}
"""The argument that makes each cluster-wide policy, by its resource name's key (library review 8, m2: the hint named
``upgrade_notices`` for every policy)."""


def _once_hint(name: str) -> str:
    arg = next((a for key, a in ONCE_ARGUMENTS.items() if name.endswith(f"-{key}")), None)
    return f"{arg} on one namespace's Observability" if arg else "one Observability makes it"


def _duplicate_alerts(view: PlanView) -> list[Finding]:
    """Alert policies of one project whose conditions are the same (two ``Observability`` with ``upgrade_notices``
    each making the cluster-notice policy, library review 6, m9): one event opens an incident on each. The
    maintenance pages, which overlap without being the same, are :mod:`maintenance_pages`'."""
    seen: dict[tuple[str, str], list[str]] = {}
    for r in view.of_type(ALERT_POLICY):
        if maintenance_pages.is_page(r):
            continue
        inputs = r["inputs"]
        key = (str(inputs.get("project", "")), json.dumps(inputs.get("conditions"), sort_keys=True))
        seen.setdefault(key, []).append(str(r["name"]))
    return [
        Finding(
            f"declared twice AlertPolicy {names[0]}",
            False,
            f"{', '.join(names)} watch the same conditions: one event opens an incident on each; create the policy "
            f"once ({_once_hint(names[0])})",
        )
        for names in seen.values()
        if len(names) > 1
    ]
