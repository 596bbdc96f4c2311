"""``prerequisites``: project APIs, Google Groups for RBAC, Cloud NAT for private nodes, log-based metrics, and the
Kubernetes ones (:mod:`.k8s_prereqs`: each custom resource's controller release installed, new enough and applied
first; each object after its Namespace).

Each needed API must be enabled by a ``gcp:projects/service:Service`` (``disableOnDestroy: false``)
that every resource needing it depends on, directly or through other dependencies. A parent does
not count: the engine does not make a component's children wait for the component's own
``depends_on`` (which is why the components pass it on to their children).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from tpu_serving.platform.services import API_ARGUMENTS
from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL
from tpu_serving_tools.runtime import gcp_facts as facts
from tpu_serving_tools.runtime import k8s_prereqs, metrics_adapter
from tpu_serving_tools.runtime.existing import declared_existing, existing_cluster
from tpu_serving_tools.runtime.planview import Dependencies, PlanView, entries
from tpu_serving_tools.runtime.result import CategoryResult, Finding

ROUTER = "gcp:compute/router:Router"
ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
LOG_METRIC = "gcp:logging/metric:Metric"
_USER_METRIC = re.compile(r'metric\.type\s*=\s*"' + re.escape(facts.USER_METRIC_PREFIX) + r'([^"]+)"')


def _get(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def needed_apis(resource: Mapping[str, Any]) -> dict[str, str]:
    """{api: source} a resource needs, by type, by its Kubernetes kind and by the features its inputs turn on."""
    out = {n.api: n.source for n in facts.API_BY_TYPE.get(resource["type"], ())}
    if str(resource["type"]).startswith("kubernetes:"):
        out.update({n.api: n.source for n in facts.KIND_APIS.get(str(resource["inputs"].get("kind", "")), ())})
    if resource["type"] in (CLUSTER, NODE_POOL):
        for feat in facts.FEATURE_APIS:
            if _get(resource["inputs"], feat.path):
                out.setdefault(feat.api, feat.source)
    return out


def existing_apis(view: PlanView) -> set[str]:
    """The APIs a plan on an existing cluster names existing (its ``cloudResources`` output's project APIs entry)."""
    return {api.strip() for e in declared_existing(view, "project APIs") for api in str(e.get("name", "")).split(",")}


def platform_stack(view: PlanView) -> str | None:
    """The platform stack a model stack's plan names (``platform.stack``): its APIs and the metrics adapter's grant
    are that stack's (GKE review m2, m3); None for any other plan."""
    ref = view.setting("platform")
    stack = ref.get("stack") if isinstance(ref, dict) else None
    return str(stack) if stack else None


def _api_services(view: PlanView) -> dict[str, Mapping[str, Any]]:
    return {str(r["inputs"].get("service")): r for r in view.of_type(facts.SERVICE_TYPE)}


def _listed_by(api: str) -> str:
    """How a program has ``tpu_serving.platform.services.required_apis`` list ``api`` (library review 9, m3), or nothing."""
    if api not in API_ARGUMENTS:
        return ""
    argument = API_ARGUMENTS[api]
    call = f"required_apis(..., {argument})" if argument else "required_apis(...), whatever its arguments"
    return f"; a program's ProjectServices gets it from tpu_serving.platform.services.{call}"


def api_findings(view: PlanView) -> Iterator[Finding]:
    """One finding per needed API."""
    needers: dict[str, list[Mapping[str, Any]]] = {}
    sources: dict[str, str] = {}
    for r in view.resources:
        if r.get("custom"):
            for api, src in needed_apis(r).items():
                needers.setdefault(api, []).append(r)
                sources.setdefault(api, src)
    services = _api_services(view)
    named = existing_apis(view)
    graph = Dependencies.of(view)
    platform = platform_stack(view)
    for api in sorted(needers):
        svc = services.get(api)
        subject = f"api {api}"
        if svc is None and platform:
            yield Finding(
                subject, True, f"the platform stack {platform}'s (platform.stack), which enables the project's APIs"
            )
            continue
        if svc is None and api in named:
            yield Finding(
                subject, True, "named existing (projectApis: existing): enabled already, as the preview lists"
            )
            continue
        if svc is None:
            yield Finding(
                subject,
                False,
                f"not enabled by any {facts.SERVICE_TYPE} "
                f"(needed by {len(needers[api])} resource(s), e.g. {needers[api][0]['name']}; {sources[api]})"
                f"{_listed_by(api)}",
            )
            continue
        if svc["inputs"].get("disableOnDestroy", True) is not False:
            yield Finding(subject, False, f"{svc['name']} must set disableOnDestroy: false")
            continue
        missing = [r["name"] for r in needers[api] if svc["urn"] not in graph.ancestors(r["urn"])]
        yield (
            Finding(subject, False, f"enabled by {svc['name']} but not a dependency of {', '.join(missing)}")
            if missing
            else Finding(subject, True, f"enabled by {svc['name']}, a dependency of every user")
        )


def _group_subjects(view: PlanView) -> list[str]:
    out = []
    for kind in ("RoleBinding", "ClusterRoleBinding"):
        for b in view.kubernetes_objects(kind):
            out += [s["name"] for s in b.get("subjects") or () if s.get("kind") == "Group"]
    return out


def group_rbac_findings(view: PlanView) -> Iterator[Finding]:
    """Group subjects need the cluster's authenticatorGroupsConfig.securityGroup (an existing cluster's, as the plan
    records it)."""
    groups = _group_subjects(view)
    if not groups:
        return
    clusters = [
        (c["name"], _get(c["inputs"], ("authenticatorGroupsConfig", "securityGroup"))) for c in view.of_type(CLUSTER)
    ]
    existing = existing_cluster(view)
    if existing is not None:
        clusters.append((str(existing.get("clusterName")), existing.get("securityGroup")))
    for name, sg in clusters:
        ok = isinstance(sg, str) and sg.startswith("gke-security-groups@")
        yield Finding(
            f"group rbac {name}",
            ok,
            f"securityGroup {sg}"
            if ok
            else f"RBAC binds Group(s) {', '.join(sorted(set(groups)))} but the cluster has no "
            f"authenticatorGroupsConfig.securityGroup gke-security-groups@<domain> ({facts.GROUPS_FOR_RBAC})",
        )


def _region(location: str) -> str:
    parts = location.split("-")
    return "-".join(parts[:2]) if len(parts) > 2 else location


def declared_existing_nat(view: PlanView) -> tuple[str, str, str] | None:
    """(network, router, NAT) of the existing Cloud NAT the stack file names (``cluster.cloudNat: existing``)."""
    cluster = view.setting("cluster")
    if isinstance(cluster, dict) and cluster.get("cloudNat") == "existing":
        return (
            str(cluster.get("network", "default")),
            str(cluster.get("existingNatRouter")),
            str(cluster.get("existingNat")),
        )
    return None


def nat_findings(view: PlanView) -> Iterator[Finding]:
    """Private nodes need a RouterNat on a Router in the cluster's network and region, or a stack file that
    declares the network's existing one (made by another stack or by the network's owners)."""
    routers = {r["urn"]: r for r in view.of_type(ROUTER)}
    for c in view.of_type(CLUSTER):
        if not _get(c["inputs"], ("privateClusterConfig", "enablePrivateNodes")):
            continue
        network, region = c["inputs"].get("network", "default"), _region(str(c["inputs"].get("location", "")))
        existing = declared_existing_nat(view)
        if existing and not view.of_type(ROUTER_NAT):
            yield Finding(
                f"cloud nat {c['name']}",
                True,
                f"the existing Cloud NAT {existing[1]}/{existing[2]} of network {network} in {region} "
                "(cluster.cloudNat: existing), "
                "which pulumi up looks up before creating anything",
            )
            continue
        ok_nat = None
        for nat in view.of_type(ROUTER_NAT):
            router = next(
                (routers[u] for u in (nat.get("propertyDependencies") or {}).get("router", ()) if u in routers), None
            )
            router = router or next(
                (r for r in routers.values() if r["inputs"].get("name") == nat["inputs"].get("router")), None
            )
            if (
                router
                and str(router["inputs"].get("network", "")).endswith(str(network))
                and router["inputs"].get("region", nat["inputs"].get("region")) == region
            ):
                ok_nat = nat
        yield Finding(
            f"cloud nat {c['name']}",
            ok_nat is not None,
            f"{ok_nat['name']} on network {network} in {region}"
            if ok_nat
            else f"private nodes without a RouterNat on a Router in network {network}, region {region}: "
            f"images from outside Google cannot be pulled ({facts.CLOUD_NAT_FOR_PRIVATE_NODES})",
        )


def _condition_filters(policy: Mapping[str, Any]) -> Iterator[str]:
    for c in policy["inputs"].get("conditions") or ():
        for kind in ("conditionThreshold", "conditionAbsent"):
            body = c.get(kind) if isinstance(c, Mapping) else None
            if isinstance(body, Mapping) and isinstance(body.get("filter"), str):
                yield body["filter"]


def log_metric_findings(view: PlanView) -> Iterator[Finding]:
    """Each log-based metric an alert condition reads must be created by the plan, before the policy."""
    metrics = {str(m["inputs"].get("name")): m for m in view.of_type(LOG_METRIC)}
    graph = Dependencies.of(view)
    for policy in view.of_type(ALERT_POLICY):
        for name in sorted({n for f in _condition_filters(policy) for n in _USER_METRIC.findall(f)}):
            metric = metrics.get(name)
            subject = f"log metric {name} of {policy['name']}"
            if metric is None:
                yield Finding(
                    subject, False, f"no {LOG_METRIC} of the plan creates it ({facts.LOG_METRIC_BEFORE_POLICY})"
                )
            elif metric["urn"] not in graph.ancestors(policy["urn"]):
                yield Finding(
                    subject,
                    False,
                    f"created by {metric['name']}, which the policy does not depend on "
                    f"({facts.LOG_METRIC_BEFORE_POLICY})",
                )
            else:
                yield Finding(subject, True, f"created by {metric['name']} before the policy")


DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
_CLUSTER_FILTER = re.compile(r'(?:\bcluster_name|\bcluster)\s*=\s*\\*"([a-z][-a-z0-9]*)')
"""A Cloud Logging or Monitoring filter's ``resource.labels.cluster_name="X"``, or a PromQL ``cluster="X"``."""


def _strings(value: Any) -> Iterator[str]:
    return (v for _, v in entries(value) if isinstance(v, str))


def monitored_cluster_findings(view: PlanView) -> Iterator[Finding]:
    """Each cluster the plan's log-based metrics, alert policies and dashboards filter on is the plan's cluster (the
    one it creates, or its existing one): ``ObservabilityArgs.cluster`` is a name, and one that is not the cluster's
    leaves every alert watching nothing (library review 3, M4)."""
    existing = existing_cluster(view)
    clusters = {str(c["inputs"].get("name")) for c in view.of_type(CLUSTER)}
    clusters |= {str(existing.get("clusterName"))} if existing else set()
    watched: dict[str, list[str]] = {}
    for r in [*view.of_type(LOG_METRIC), *view.of_type(ALERT_POLICY), *view.of_type(DASHBOARD)]:
        for name in sorted({n for text in _strings(r["inputs"]) for n in _CLUSTER_FILTER.findall(text)}):
            watched.setdefault(name, []).append(str(r["name"]))
    for name, who in sorted(watched.items()):
        ours = name in clusters
        said = f"{len(who)} log metric(s), alert policies and dashboards filter on it"
        why = (
            said
            if ours
            else f"{said} ({', '.join(who[:3])}...), but the plan's cluster is {', '.join(sorted(clusters)) or 'none'}: they watch nothing; pass the cluster's name (the name given TpuClusterArgs, a plain string) as ObservabilityArgs.cluster"
        )
        yield Finding(f"monitored cluster {name}", ours, why)


def workload_pool_findings(view: PlanView) -> Iterator[Finding]:
    """A binding to a Workload Identity principal waits for the plan's cluster that creates its pool."""
    makers = {
        str((c["inputs"].get("workloadIdentityConfig") or {}).get("workloadPool")): c["urn"]
        for c in view.of_type(CLUSTER)
    }
    graph = Dependencies.of(view)
    existing_pool = (existing_cluster(view) or {}).get("workloadPool")
    for binding in view.resources:
        match = facts.WORKLOAD_POOL_MEMBER.match(str(binding["inputs"].get("member", "")))
        if not binding["type"].endswith(":IAMMember") or match is None:
            continue
        pool, subject = match.group(1), f"workload pool of {binding['name']}"
        cluster = makers.get(pool)
        if cluster is None and existing_pool == pool:
            yield Finding(subject, True, f"{pool} is the existing cluster's")
        elif cluster is None:
            yield Finding(subject, True, f"no cluster of the plan makes {pool}: it must exist already")
        elif cluster in graph.ancestors(binding["urn"]):
            yield Finding(subject, True, f"waits for the cluster that makes {pool}")
        else:
            yield Finding(
                subject, False, f"does not wait for the cluster that makes {pool}: {facts.WORKLOAD_POOL_BEFORE_BINDING}"
            )


def check(view: PlanView) -> CategoryResult:
    """One finding per prerequisite."""
    found = [
        *api_findings(view),
        *group_rbac_findings(view),
        *nat_findings(view),
        *log_metric_findings(view),
        *workload_pool_findings(view),
        *monitored_cluster_findings(view),
        *k8s_prereqs.kind_findings(view),
        *k8s_prereqs.gateway_findings(view),
        *k8s_prereqs.fuse_findings(view),
        *k8s_prereqs.namespace_findings(view),
        *k8s_prereqs.priority_findings(view),
        *metrics_adapter.findings(view),
    ]
    return CategoryResult("prerequisites", found)
