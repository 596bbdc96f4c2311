"""Kubernetes prerequisites: a custom resource needs the controller release that serves its kind installed by the plan,
new enough for the fields it sets, and created after it; a namespaced object waits for the Namespace the plan makes.

A stack file's deployment wires these itself; a program that builds the components by hand can leave out the
``ControllerInstall``, pin an older release than the object needs, or forget ``depends_on``, and the first
``pulumi up`` then fails: the API server has no such kind yet (``no matches for kind``), refuses a field value its
CRD does not list, or the object is created before its namespace exists. The releases and what they serve are this
module's own table, read from each controller's source at the tags named; a release manifest is recognised by its
download address.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving.common.naming import DEFAULT_NAMESPACE, RESERVED_NAMESPACES
from tpu_serving.config.checks import gke_version
from tpu_serving.traffic.gateway import INFERENCE_POOL_MIN_GKE
from tpu_serving_tools.gcp_types import CLUSTER
from tpu_serving_tools.runtime.planview import Dependencies, PlanView, entries, qualified_name
from tpu_serving_tools.runtime.result import Finding


@dataclass(frozen=True)
class Release:
    """A controller whose release manifest installs the CRDs of some API groups."""

    controller: str
    address: re.Pattern[str]
    """The release manifest's download address; group ``v`` is the release."""
    groups: tuple[str, ...]


RELEASES: tuple[Release, ...] = (
    Release(
        "LeaderWorkerSet",
        re.compile(r"^https://github\.com/kubernetes-sigs/lws/releases/download/(?P<v>v[\d.]+)/manifests\.yaml$"),
        ("leaderworkerset.x-k8s.io", "disaggregatedset.x-k8s.io"),
    ),
    Release(
        "JobSet",
        re.compile(r"^https://github\.com/kubernetes-sigs/jobset/releases/download/(?P<v>v[\d.]+)/manifests\.yaml$"),
        ("jobset.x-k8s.io",),
    ),
    Release(
        "PathwaysJob",
        re.compile(r"^https://github\.com/google/pathways-job/releases/download/(?P<v>v[\d.]+)/install\.yaml$"),
        ("pathways-job.pathways.domain",),
    ),
)
"""Release manifests by address (kubernetes-sigs/lws and jobset: the ``manifests.yaml`` asset of each GitHub
release, as their install docs apply it; google/pathways-job: ``install.yaml``, ../shared/reference/crds/
pathwaysjob-v0.1.4-install.yaml)."""


@dataclass(frozen=True)
class Since:
    """What a release serves from ``version`` on: a kind, or a field value (``path`` = ``value``) of a kind."""

    group: str
    kind: str
    version: str
    source: str
    path: tuple[str, ...] = ()
    value: str = ""


SINCE: tuple[Since, ...] = (
    Since(
        "disaggregatedset.x-k8s.io",
        "DisaggregatedSet",
        "v0.9.0",
        "kubernetes-sigs/lws v0.9.0 config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsets.yaml (none in v0.8.0)",
    ),
    Since(
        "disaggregatedset.x-k8s.io",
        "DisaggregatedSetRoleScaler",
        "v0.10.0",
        "kubernetes-sigs/lws v0.10.0 config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsetrolescalers.yaml "
        "(none in v0.9.0)",
    ),
    Since(
        "leaderworkerset.x-k8s.io",
        "LeaderWorkerSet",
        "v0.9.0",
        "kubernetes-sigs/lws v0.9.0 api/leaderworkerset/v1/leaderworkerset_types.go l.169 (the restartPolicy enum; "
        "v0.8.0 has RecreateGroupAfterStart only as an experimental annotation, l.98)",
        ("spec", "leaderWorkerTemplate", "restartPolicy"),
        "RecreateGroupAfterStart",
    ),
)
"""Kinds and field values and the first release that serves them (the lws mirror at each tag)."""


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.lstrip("v").split(".") if x.isdigit())


def _group_kind(resource: Mapping[str, Any]) -> tuple[str, str] | None:
    """(API group, kind) of a Kubernetes object of a custom API group, else None."""
    type_ = str(resource["type"])
    if not type_.startswith("kubernetes:") or type_.count(":") != 2:
        return None
    api, kind = type_.split(":")[1:]
    group = api.rsplit("/", 1)[0] if "/" in api else ""
    return (group, kind) if group in {g for r in RELEASES for g in r.groups} else None


def installs(view: PlanView) -> dict[str, tuple[str, str, Mapping[str, Any]]]:
    """API group -> (controller, release, the resource that applies the release manifest). A manifest read from a
    mirror or a local file is recognised by the upstream address its ``ControllerInstall`` records (``upstream``). A
    ``ControllerInstall`` that owns nothing (``owned: false``: the cluster runs the release) serves the groups of the
    release it names: the stack's precondition, which the plan cannot check."""
    out: dict[str, tuple[str, str, Mapping[str, Any]]] = {}
    parents = {str(r["urn"]): r for r in view.resources if not r.get("custom")}
    for r in view.resources:
        outputs = r.get("registeredOutputs") or {}
        files: list[Any]
        if str(r["type"]).endswith(":ControllerInstall") and outputs.get("owned") is False:
            files, upstream = [], outputs.get("upstream")  # nothing applied: the release the cluster runs
        elif str(r["type"]).startswith("kubernetes:yaml/"):
            files = r["inputs"].get("files") or [r["inputs"].get("file")]
            upstream = ((parents.get(str(r.get("parent"))) or {}).get("registeredOutputs") or {}).get("upstream")
        else:
            continue
        for address in [*files, upstream]:
            for release in RELEASES:
                if isinstance(address, str) and (m := release.address.match(address)):
                    out.update({g: (release.controller, m.group("v"), r) for g in release.groups})
    return out


def _field(obj: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def kind_findings(view: PlanView) -> Iterator[Finding]:
    """One finding per custom resource of a controller's group: served, new enough, created after the install."""
    served = installs(view)
    graph = Dependencies.of(view, through_components=True)
    for r in view.resources:
        gk = _group_kind(r)
        if gk is None:
            continue
        group, kind = gk
        subject = f"kind {kind} {r['name']}"
        install = served.get(group)
        if install is None:
            yield Finding(
                subject,
                False,
                f"no controller release in the plan serves {group} (the first pulumi up fails: no matches for kind "
                f"{kind}); install it (ControllerInstall) and make the object depend on it",
            )
            continue
        controller, release, applier = install
        late = [
            s
            for s in SINCE
            if (s.group, s.kind) == gk
            and _version(release) < _version(s.version)
            and (not s.path or _field(r["inputs"], s.path) == s.value)
        ]
        if late:
            s = late[0]
            what = f"{'.'.join(s.path)}: {s.value}" if s.path else f"kind {kind}"
            yield Finding(
                subject,
                False,
                f"{what} needs {controller} {s.version} or later, the plan installs {release} ({s.source})",
            )
            continue
        if (applier.get("registeredOutputs") or {}).get("owned") is False:
            yield Finding(
                subject, True, f"served by {controller} {release}, which the cluster runs ({applier['name']})"
            )
            continue
        if applier["urn"] not in graph.ancestors(str(r["urn"])):
            yield Finding(
                subject,
                False,
                f"does not wait for {applier['name']}, which installs {controller} {release}: without that dependency "
                "the first pulumi up may create it before its CRD exists",
            )
            continue
        yield Finding(subject, True, f"served by {controller} {release} ({applier['name']}), created after it")


def _undeclared_namespaces(view: PlanView, declared: set[str]) -> Iterator[Finding]:
    """Each namespace the plan's objects are in that no Namespace of the plan makes, no ``WorkloadIdentity`` names as
    existing (its registered ``namespace``) and the cluster does not have from the start (library review 8, M2: a
    ``Tenancy`` given a mistyped namespace passed; the API server refuses every object in it, ``namespaces ... not
    found``, and the real namespace is left without its quota and NetworkPolicies)."""
    known = declared | {
        str((r.get("registeredOutputs") or {}).get("namespace"))
        for r in view.resources
        if str(r["type"]).endswith(":WorkloadIdentity")
    }
    known |= {DEFAULT_NAMESPACE, *RESERVED_NAMESPACES}
    used: dict[str, list[str]] = {}
    for r in view.resources:
        ns = (r["inputs"].get("metadata") or {}).get("namespace") if str(r["type"]).startswith("kubernetes:") else None
        if isinstance(ns, str) and ns not in known:
            used.setdefault(ns, []).append(str(r["name"]))
    for ns, names in sorted(used.items()):
        yield Finding(
            f"namespace {ns}",
            False,
            f"{', '.join(names[:4])}{' ...' if len(names) > 4 else ''} are in namespace {ns}, which no Namespace of the "
            "plan makes and no WorkloadIdentity names: the API server refuses them (namespaces not found); a typo of "
            f"the serving's namespace ({', '.join(sorted(declared)) or 'none declared'})?",
        )


def namespace_findings(view: PlanView) -> Iterator[Finding]:
    """Per Namespace the plan creates: every object in it waits for it."""
    namespaces = {
        str((r["inputs"].get("metadata") or {}).get("name")): r for r in view.of_type("kubernetes:core/v1:Namespace")
    }
    inside: dict[str, list[Mapping[str, Any]]] = {ns: [] for ns in namespaces}
    for r in view.resources:
        if str(r["type"]).startswith("kubernetes:") and r["type"] != "kubernetes:core/v1:Namespace":
            ns = (r["inputs"].get("metadata") or {}).get("namespace")
            if isinstance(ns, str) and ns in inside:
                inside[ns].append(r)
    yield from _undeclared_namespaces(view, set(namespaces))
    graph = Dependencies.of(view, through_components=True)
    for ns, objects in sorted(inside.items()):
        made = namespaces[ns]
        early = [o["name"] for o in objects if made["urn"] not in graph.ancestors(str(o["urn"]))]
        yield (
            Finding(
                f"namespace {ns}",
                False,
                f"{', '.join(early)} do(es) not wait for Namespace {ns} ({made['name']}): the first pulumi up may "
                "create them before the namespace exists",
            )
            if early
            else Finding(f"namespace {ns}", True, f"{len(objects)} object(s) in it wait for {made['name']}")
        )


BUILT_IN_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
"""The PriorityClasses every cluster has (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
#priorityclass: "Kubernetes already ships with two PriorityClasses: system-cluster-critical and system-node-critical")."""
PRIORITY_REFUSED = (
    "the API server refuses the pod: no PriorityClass of that name ('no PriorityClass with name ... was found', the "
    "Priority admission plugin, kubernetes/kubernetes v1.36.3 plugin/pkg/admission/priority/admission.go)"
)


def declared_priority_classes(view: PlanView) -> frozenset[str]:
    """The PriorityClasses a pod of the plan may name: those the plan declares (as a ``PriorityClass``, or as a
    ``PriorityClassPatch``, whose server-side apply creates the class when it is absent:
    ``TenancyArgs(shared_cluster=True)``), and the built-in ones."""
    declared = {
        str((r["inputs"].get("metadata") or {}).get("name"))
        for kind in ("PriorityClass", "PriorityClassPatch")
        for r in view.of_type(f"kubernetes:scheduling.k8s.io/v1:{kind}")
    }
    return BUILT_IN_PRIORITY_CLASSES | declared


def priority_class_names(value: Any) -> Iterator[str]:
    """Every ``priorityClassName`` in an object's pod templates, however deep (a CronJob's job template, an LWS's
    leader and worker templates, a JobSet's replicated jobs)."""
    return (v for k, v in entries(value) if k == "priorityClassName" and isinstance(v, str) and v)


def priority_findings(view: PlanView) -> Iterator[Finding]:
    """Per object whose pods name a PriorityClass: the class is one the plan declares or a built-in one. A program
    without :class:`tpu_serving.Tenancy` has none of the stack's classes (``tpu-serving-online``), and a component
    that defaults to one then never gets a pod created."""
    known = declared_priority_classes(view)
    for r in view.resources:
        if not str(r["type"]).startswith("kubernetes:"):
            continue
        meta = r["inputs"].get("metadata") or {}
        where = f"{r['inputs'].get('kind', r['type'].rsplit(':', 1)[-1])} {meta.get('namespace', 'default')}/{meta.get('name')}"
        for name in dict.fromkeys(priority_class_names(r["inputs"].get("spec") or {})):
            subject = f"priority class {name} of {where}"
            yield (
                Finding(subject, True, "declared in the plan" if name not in BUILT_IN_PRIORITY_CLASSES else "built in")
                if name in known
                else Finding(subject, False, PRIORITY_REFUSED)
            )


GATEWAY_GROUPS = ("gateway.networking.k8s.io", "networking.gke.io", "inference.networking.k8s.io")
"""API groups of the objects a ``ServingGateway`` declares, served by GKE's Gateway API support."""
GATEWAY_ON = ("CHANNEL_STANDARD", "CHANNEL_EXPERIMENTAL")
"""``gatewayApiConfig.channel`` values with Gateway API support on (GKE API v1, ``GatewayAPIConfig.Channel``:
CHANNEL_DISABLED "Gateway API support is disabled", CHANNEL_STANDARD "Gateway API support is enabled, standard CRDs
are installed", CHANNEL_EXPERIMENTAL the same with the experimental CRDs)."""


def _gateway_kinds(view: PlanView) -> list[str]:
    kinds = []
    for r in view.resources:
        type_ = str(r["type"])
        api = type_.split(":")[1] if type_.startswith("kubernetes:") and type_.count(":") == 2 else ""
        if api.rsplit("/", 1)[0] in GATEWAY_GROUPS:
            kinds.append(type_.rsplit(":", 1)[1])
    return sorted(set(kinds))


def gateway_findings(view: PlanView) -> Iterator[Finding]:
    """The Gateway API objects of the plan against the cluster the plan creates (library review 6, m1): its Gateway
    API support on, and, for an InferencePool, a control plane that serves its CRD (an existing cluster's are its
    owner's to hold: the plan does not show them)."""
    kinds = _gateway_kinds(view)
    if not kinds:
        return
    for c in view.of_type(CLUSTER):
        inputs, name = c["inputs"], str(c["inputs"].get("name") or c["name"])
        channel = (inputs.get("gatewayApiConfig") or {}).get("channel")
        yield Finding(
            f"gateway api on cluster {name}",
            channel in GATEWAY_ON,
            f"gatewayApiConfig.channel {channel} serves the plan's {', '.join(kinds)}"
            if channel in GATEWAY_ON
            else f"the plan declares {', '.join(kinds)}, but the cluster's Gateway API support is off (gatewayApiConfig "
            f"{channel or 'unset'}): set TpuClusterArgs.gateway_api=True",
        )
        version = inputs.get("minMasterVersion")
        if "InferencePool" in kinds and isinstance(version, str) and version != "latest":
            need = "{}.{}.{}-gke.{}".format(*INFERENCE_POOL_MIN_GKE)
            yield Finding(
                f"inference pool crd on cluster {name}",
                gke_version(version) >= INFERENCE_POOL_MIN_GKE,
                f"minMasterVersion {version}: GKE serves the InferencePool CRD from {need}"
                + (
                    ""
                    if gke_version(version) >= INFERENCE_POOL_MIN_GKE
                    else "; set TpuClusterArgs.min_master_version to it or later"
                ),
            )


GCS_FUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
"""The Cloud Storage FUSE CSI driver's name, which GKE registers on the nodes only with the add-on
(``addonsConfig.gcsFuseCsiDriverConfig.enabled``; GKE "Access Cloud Storage buckets with the Cloud Storage FUSE CSI
driver": a pod's ``csi.driver: gcsfuse.csi.storage.gke.io`` volume)."""


def fuse_findings(view: PlanView) -> Iterator[Finding]:
    """Pod templates mounting a Cloud Storage FUSE volume against the add-on of the cluster the plan creates (GKE
    review 65, m2: without it every such pod stays ContainerCreating, the driver not registered)."""
    mounting = sorted(
        {
            f"{obj['kind']} {qualified_name(obj)}"
            for obj in view.kubernetes_objects()
            for key, value in entries(obj.get("spec"))
            if key == "csi" and isinstance(value, Mapping) and value.get("driver") == GCS_FUSE_DRIVER
        }
    )
    if not mounting:
        return
    for c in view.of_type(CLUSTER):
        name = str(c["inputs"].get("name") or c["name"])
        on = bool(((c["inputs"].get("addonsConfig") or {}).get("gcsFuseCsiDriverConfig") or {}).get("enabled"))
        yield Finding(
            f"gcs fuse driver on cluster {name}",
            on,
            f"the add-on serves the Cloud Storage FUSE volumes of {', '.join(mounting)}"
            if on
            else f"{', '.join(mounting)} mount Cloud Storage FUSE volumes, but the cluster's Cloud Storage FUSE CSI driver "
            "add-on is off: their pods would stay ContainerCreating; set TpuClusterArgs.gcs_fuse_csi_driver=True "
            "(cluster.gcsFuseCsiDriver)",
        )
