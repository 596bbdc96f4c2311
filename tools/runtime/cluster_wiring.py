"""What a program types again by hand for its GKE cluster, held against the plan's cluster (library review 9, M6, M7).

``ServingGatewayArgs.network``, ``subnetwork`` and ``region`` and ``ServingAutoscalerArgs.project`` are plain strings,
and nothing in the library compares them with ``TpuClusterArgs``: each resource they make is valid on its own, so
``pulumi up`` succeeds, and the serving does not.

- A ``gke-l7-rilb`` Gateway needs a proxy-only subnet (purpose ``REGIONAL_MANAGED_PROXY``) in its cluster's VPC network
  and region ("If you are using the internal GatewayClasses, you must enable a proxy-only subnet", GKE, Configure
  Gateway resources using Policies, "GKE Gateway controller requirements",
  https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources; the proxies of a regional
  internal load balancer take their addresses from the one active proxy-only subnet of its VPC network and region,
  https://cloud.google.com/load-balancing/docs/proxy-only-subnets), and its address (``SHARED_LOADBALANCER_VIP``) is
  an internal address of that network, reserved in the cluster's subnet and region: else GKE's Gateway controller
  leaves the Gateway unprogrammed (a subnet of that name the cluster's network does not have fails only at ``pulumi
  up``).
- The Custom Metrics Stackdriver Adapter reads Cloud Monitoring as its Kubernetes service account, a principal of the
  cluster's workload identity pool (``<cluster project>.svc.id.goog``: the cluster's
  ``workloadIdentityConfig.workloadPool``; :func:`tpu_serving.operations.autoscaling.adapter_member`). A grant to a principal of
  another project's pool gives the cluster's adapter nothing: the HPA never reads its metric. The project the role is
  granted *in* is not held to the cluster's: a Cloud Monitoring metrics scope legitimately reads the metrics of other
  projects (Metrics scopes overview, https://cloud.google.com/monitoring/settings, read 2026-12-01: a project's
  metrics scope is the set of projects whose time-series data it can chart and monitor), so monitoring resources in
  another project are not failed.

A plan with no cluster of its own (an existing cluster: ``vllm-llama33-70b-existing``) records no network to compare
with, and says so in a passing finding; the adapter's pool is then held to the existing cluster's recorded
``workloadPool``. With two clusters, a resource on the network (or pool) of either passes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL, SUBNETWORK
from tpu_serving_tools.runtime.existing import existing_cluster
from tpu_serving_tools.runtime.metrics_adapter import ADAPTER_PRINCIPAL, MONITORING_VIEWER
from tpu_serving_tools.runtime.planview import UNKNOWN, PlanView
from tpu_serving_tools.runtime.result import Finding

PREFIX = "cluster wiring "
"""The subject prefix of these findings, counted on the summary line (tools/check.py ``COUNTS``)."""
ADDRESS = "gcp:compute/address:Address"
NETWORK = "gcp:compute/network:Network"
LOG_METRIC = "gcp:logging/metric:Metric"
WORKLOAD_POOL_SUFFIX = ".svc.id.goog"
PROXY_ONLY = "REGIONAL_MANAGED_PROXY"
GATEWAY_VIP = "SHARED_LOADBALANCER_VIP"
"""The purpose of the address a Gateway takes (:data:`tpu_serving.traffic.gateway.ADDRESS_PURPOSE`)."""
_POOL = re.compile(r"/workloadIdentityPools/([^/]+)/")


@dataclass(frozen=True)
class Ref:
    """A network or subnetwork as a resource names it: its project (where known) and its name."""

    project: str
    name: str

    def same(self, other: Ref) -> bool:
        """The same network or subnetwork: the names agree, and the projects where both are known."""
        return self.name == other.name and (not self.project or not other.project or self.project == other.project)

    def __str__(self) -> str:
        return f"{self.project}/{self.name}" if self.project else self.name


def _known(value: Any) -> str:
    text = "" if value is None else str(value)
    return "" if UNKNOWN in text else text


def _ref(view: PlanView, resource: Mapping[str, Any], field: str) -> Ref | None:
    """``field`` of ``resource`` (a name, ``projects/<p>/.../<name>`` or a self-link) as a :class:`Ref`: its last path
    segment, with the path's project, else the resource's own; a value only the provider computes is read off the
    resource of the plan it comes from (a Network or Subnetwork's name). None: not known offline."""
    text = _known(resource["inputs"].get(field))
    if not text:
        source = next((r for r in view.input_source(resource, field) if r["type"] in (NETWORK, SUBNETWORK)), None)
        if source is None or not _known(source["inputs"].get("name")):
            return None
        return Ref(_known(source["inputs"].get("project")), str(source["inputs"]["name"]))
    parts = text.rstrip("/").split("/")
    project = (
        parts[parts.index("projects") + 1] if "projects" in parts[:-1] else _known(resource["inputs"].get("project"))
    )
    return Ref(project, parts[-1])


def _region(location: str) -> str:
    """A region, or a zone's region (``us-east5-a`` -> ``us-east5``)."""
    parts = location.split("-")
    return "-".join(parts[:2]) if len(parts) > 2 else location


@dataclass(frozen=True)
class Cluster:
    """What the plan's cluster is wired to."""

    name: str
    network: Ref | None
    subnetwork: Ref | None
    region: str


def _clusters(view: PlanView) -> list[Cluster]:
    out = []
    for c in view.of_type(CLUSTER):
        inputs = c["inputs"]
        network = _ref(view, c, "network") if inputs.get("network") else Ref(_known(inputs.get("project")), "default")
        # unset: the network's subnet in the region, named after the network in an auto-mode network (TpuClusterArgs
        # .subnetwork; tpu_serving.derived.gateway_address_and_subnet reserves the address there)
        subnetwork = _ref(view, c, "subnetwork") if inputs.get("subnetwork") else network
        name, region = str(inputs.get("name") or c["name"]), _region(_known(inputs.get("location")))
        out.append(Cluster(name, network, subnetwork, region))
    return out


def _mismatches(cluster: Cluster, region: str, field: str, ref: Ref | None, theirs: Ref | None) -> list[str]:
    """What of (region, ``field``) differs from ``cluster``'s: ``<what> <ours>, but cluster <name>'s is <theirs>``."""
    wrong = []
    if region and cluster.region and region != cluster.region:
        wrong.append(f"region {region}, but cluster {cluster.name}'s is {cluster.region}")
    if ref is not None and theirs is not None and not ref.same(theirs):
        wrong.append(f"{field} {ref}, but cluster {cluster.name}'s is {theirs}")
    return wrong


def _gateway_resources(view: PlanView) -> Iterator[tuple[Mapping[str, Any], str, str]]:
    """(resource, ``network`` or ``subnetwork``, ServingGatewayArgs fields) of each proxy-only subnet and Gateway
    address of the plan."""
    for r in view.of_type(SUBNETWORK):
        if r["inputs"].get("purpose") == PROXY_ONLY:
            yield r, "network", "ServingGatewayArgs.network, region"
    for r in view.of_type(ADDRESS):
        if r["inputs"].get("purpose") == GATEWAY_VIP:
            yield r, "subnetwork", "ServingGatewayArgs.subnetwork, region"


def network_findings(view: PlanView) -> Iterator[Finding]:
    """Each proxy-only subnet and Gateway address in the network (or subnetwork) and region of a cluster of the
    plan."""
    clusters = _clusters(view)
    for r, field, args in _gateway_resources(view):
        kind = "proxy-only subnet" if r["type"] == SUBNETWORK else "Gateway address"
        subject = f"{PREFIX}{kind} {r['name']}"
        if not clusters:
            yield Finding(
                subject, True, "the plan makes no GKE cluster (an existing cluster): no network of it to compare with"
            )
            continue
        ref, region = _ref(view, r, field), _region(_known(r["inputs"].get("region")))
        settings = view.setting("gateway")
        chosen = settings.get("addressSubnetwork") if isinstance(settings, dict) and field == "subnetwork" else None
        if ref is not None and chosen and ref.name == chosen:
            ref = None  # the stack file's own subnet for it (gateway.addressSubnetwork): its region is still compared
        wrongs = [
            _mismatches(c, region, field, ref, c.network if field == "network" else c.subnetwork) for c in clusters
        ]
        if any(not w for w in wrongs):
            said = (
                f"{field} {ref}"
                if ref
                else f"{field} {chosen}, the stack's"
                if chosen
                else f"{field} not known offline"
            )
            yield Finding(subject, True, f"{said} in {region or '(its provider region)'}")
        else:
            said = "; ".join(w for found in wrongs for w in found)
            yield Finding(
                subject,
                False,
                f"{said}: the Gateway in that cluster is never programmed (a {PROXY_ONLY} subnet in its cluster's VPC "
                f"network and region, its address in the cluster's subnet); set {args} to the cluster's",
            )


def _pools(view: PlanView) -> dict[str, str]:
    """Workload identity pool -> the cluster of the plan it is (a created cluster's, or the existing one's)."""
    pools = {}
    for c in view.of_type(CLUSTER):
        inputs = c["inputs"]
        pool = _known((inputs.get("workloadIdentityConfig") or {}).get("workloadPool"))
        pool = pool or (f"{_known(inputs.get('project'))}.svc.id.goog" if _known(inputs.get("project")) else "")
        if pool:
            pools[pool] = str(inputs.get("name") or c["name"])
    existing = existing_cluster(view)
    if existing is not None and _known(existing.get("workloadPool")):
        pools[str(existing["workloadPool"])] = f"{existing.get('clusterName')} (existing)"
    return pools


def adapter_pool_findings(view: PlanView) -> Iterator[Finding]:
    """Each grant of ``roles/monitoring.viewer`` to the metrics adapter's principal names a pool of a cluster of the
    plan (the project the role is granted in is not compared: see the module docstring)."""
    pools = _pools(view)
    for r in view.resources:
        member = str(r["inputs"].get("member", ""))
        match = _POOL.search(member)
        if (
            not r["type"].endswith(":IAMMember")
            or r["inputs"].get("role") != MONITORING_VIEWER
            or ADAPTER_PRINCIPAL not in member
            or match is None
        ):
            continue
        pool, subject = match.group(1), f"{PREFIX}metrics adapter grant {r['name']}"
        if not pools:
            yield Finding(subject, True, f"the plan records no cluster's workload pool to compare {pool} with")
        elif pool in pools:
            yield Finding(subject, True, f"to a principal of {pool}, cluster {pools[pool]}'s workload pool")
        else:
            theirs = ", ".join(f"{c}'s is {p}" for p, c in sorted(pools.items()))
            yield Finding(
                subject,
                False,
                f"to a principal of workload pool {pool}, but cluster {theirs}: the cluster's adapter holds no "
                f"{MONITORING_VIEWER} and the HPA never reads its metric; set ServingAutoscalerArgs.project to the "
                "cluster's project",
            )


def duplicate_grants(view: PlanView) -> Iterator[Finding]:
    """Two IAMMember resources of one type granting one role to one member on one resource (library review 9, m7:
    two ``ServingAutoscaler`` each with ``grant_adapter_viewer``): each is a binding member the other shares, so a
    destroy of either removes the grant the other's HPA reads through. A member the preview cannot know at all
    (``<unknown>``) is not compared."""
    seen: dict[tuple[str, ...], list[str]] = {}
    for r in view.resources:
        inputs = r["inputs"]
        member = str(inputs.get("member", ""))
        if not r["type"].endswith(":IAMMember") or member in ("", "<unknown>"):
            continue
        target = inputs.get("project") or inputs.get("serviceAccountId") or inputs.get("bucket") or ""
        condition = json.dumps(inputs.get("condition"), sort_keys=True)
        seen.setdefault((r["type"], str(target), str(inputs.get("role")), member, condition), []).append(r["name"])
    for (_, target, role, member, _), names in sorted(seen.items()):
        if len(names) > 1:
            yield Finding(
                f"declared twice IAMMember {names[0]}",
                False,
                f"{', '.join(names)} each grant {role} to {member} on {target}: a destroy of one removes the grant the "
                "others rely on; grant it once (ServingAutoscalerArgs.grant_adapter_viewer on one autoscaler)",
            )


def _cluster_projects(view: PlanView) -> dict[str, str]:
    """Project -> the cluster of the plan in it (a created cluster's ``project``; an existing cluster's, read off its
    recorded workload pool ``<project>.svc.id.goog``)."""
    out = {
        _known(c["inputs"].get("project")): str(c["inputs"].get("name") or c["name"])
        for c in view.of_type(CLUSTER)
        if _known(c["inputs"].get("project"))
    }
    existing = existing_cluster(view)
    pool = _known((existing or {}).get("workloadPool"))
    if existing is not None and pool.endswith(WORKLOAD_POOL_SUFFIX):
        out[pool.removesuffix(WORKLOAD_POOL_SUFFIX)] = f"{existing.get('clusterName')} (existing)"
    return out


def project_findings(view: PlanView) -> Iterator[Finding]:
    """Each node pool and log-based metric of the plan is made in a project of a cluster of the plan (library review
    9, M7).

    - A node pool is a child of its cluster: ``projects/<p>/locations/<l>/clusters/<c>/nodePools/<n>`` (GKE API,
      projects.locations.clusters.nodePools.create), so a pool given another project than its cluster's names a
      cluster that project does not have, and is refused at ``pulumi up``; its node service account is made beside it.
    - A log-based metric counts the entries of its own project (or log bucket): "Log-based metrics can apply to a
      single Google Cloud project or to a log bucket" (Cloud Logging, Configure counter metrics,
      https://cloud.google.com/logging/docs/logs-based-metrics/counter-metrics, read 2026-12-01). GKE writes a
      cluster's events and container logs to the cluster's project, so a metric in another project stays at zero,
      and every alert on it is silent while ``pulumi up`` succeeds. Alert policies and dashboards are not compared:
      a metrics scope reads other projects' series (module docstring).
    """
    projects = _cluster_projects(view)
    for r in [*view.of_type(NODE_POOL), *view.of_type(LOG_METRIC)]:
        project = _known(r["inputs"].get("project"))
        pool = r["type"] == NODE_POOL
        subject = f"{PREFIX}{'node pool' if pool else 'log-based metric'} {r['name']}"
        if not projects or not project:
            yield Finding(subject, True, "the plan records no project to compare with")
        elif project in projects:
            yield Finding(subject, True, f"in project {project}, cluster {projects[project]}'s")
        else:
            theirs = ", ".join(f"cluster {c} is in {p}" for p, c in sorted(projects.items()))
            why = (
                "the pool is a child of its cluster, so it names a cluster that project does not have and is refused "
                "at `pulumi up`; set TpuNodePoolArgs.project to the cluster's"
                if pool
                else "a log-based metric counts only its own project's entries, and the cluster's logs are written to "
                "the cluster's project: it stays at zero and every alert on it is silent; set ObservabilityArgs.project "
                "to the cluster's"
            )
            yield Finding(subject, False, f"made in project {project}, but {theirs}: {why}")


def findings(view: PlanView) -> list[Finding]:
    return [
        *network_findings(view),
        *adapter_pool_findings(view),
        *project_findings(view),
        *duplicate_grants(view),
    ]
