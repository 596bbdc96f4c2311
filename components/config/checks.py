"""Checks across several settings, reported at the key to change."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from pydantic.alias_generators import to_camel

from ..backends import BACKENDS, scaling
from ..backends.jetstream.settings import PathwaysServingConfig
from ..backends.rollout import UPGRADE_WAIT_MINUTES, node_upgrades_held
from ..backends.saxml.settings import SaxmlServingConfig
from ..backends.vllm import VllmServingConfig
from ..catalog import capacity as capacity_rules
from ..common.gcp_zones import per_zone_minimum, pool_zones
from ..common.naming import (
    NameLimit,
    bucket_name,
    check_dns_name,
    gateway_name,
    gateway_url_map_problem,
    head_pool_name,
    head_service_account_id,
    node_service_account_id,
    pool_name,
    workload_service_account_id,
    zone_choices,
    zone_problem,
)
from ..common.quota import PodSet, derive, quota_problems
from ..common.settings import PROJECT_NAMESPACE, CreateOrExisting, to_settings
from ..operations.maintenance.host_maintenance_job import gate_pods
from ..operations.prober import ProbeTarget, prober_pods
from ..platform.lws import Rollout
from ..traffic.epp import epp_pods
from ..traffic.gateway import INFERENCE_POOL_MIN_GKE, GatewaySettings
from ..traffic.gateway_settings import existing_address_problem
from .fallback import fallback_problems
from .gke_version import gke_version as gke_version
from .gke_version import older_than as older_than
from .models import StackConfig
from .serving_facts import maintenance_gate_runs, reload_outlasting_upgrade_wait, serving_kind_names
from .startup_window import not_ready_window_problems, startup_window_problems

if TYPE_CHECKING:
    from ..platform.maintenance import MaintenanceExclusion, MaintenanceSettings


def derived_name_problems(cfg: StackConfig) -> list[str]:
    """Names derived from several keys that break a GCP limit, reported at the key to change."""
    ns = PROJECT_NAMESPACE
    cluster = cfg.cluster.name
    problems = []
    for i, s in enumerate(cfg.tpu_slices):
        for pool in s.pool_names if s.existing_node_pools is None else ():
            name = pool_name(cluster, pool)
            problem = check_dns_name(name, limit=NameLimit.GKE_NODE_POOL)
            if problem:
                problems.append(
                    f"{ns}:tpuSlices[{i}].name = {json.dumps(s.name)}: node pool name {name!r} "
                    f"(<cluster.name>-<name>) {problem}; shorten cluster.name or this name"
                )
    for i, b in enumerate(cfg.buckets):
        name = bucket_name(cfg.project, cluster, b.purpose, b.name)
        problem = check_dns_name(name, limit=NameLimit.GCS_BUCKET, min_length=3)
        if problem:
            problems.append(
                f"{ns}:buckets[{i}].name: the default bucket name {name!r} "
                f"(<project>-<cluster.name>-<purpose>) {problem}; set buckets[{i}].name"
            )
    for i, s in enumerate(cfg.tpu_slices if not cfg.existing else ()):  # an existing cluster's pools have theirs
        sa = node_service_account_id(cluster, s.name)
        problem = check_dns_name(sa, limit=NameLimit.GCP_SERVICE_ACCOUNT_ID, min_length=6)
        if problem:
            problems.append(
                f"{ns}:tpuSlices[{i}].name = {json.dumps(s.name)}: node service account id {sa!r} "
                f"(<cluster.name>-<name>) {problem}; shorten cluster.name or this name"
            )
    gsa = workload_service_account_id(cluster, cfg.workload_identity.gcp_service_account)
    problem = check_dns_name(gsa, limit=NameLimit.GCP_SERVICE_ACCOUNT_ID, min_length=6)
    if problem and cfg.workload_identity.existing_gcp_service_account is None:
        problems.append(
            f"{ns}:workloadIdentity.gcpServiceAccount: the default service account id {gsa!r} "
            f"(<cluster.name>-wl) {problem}; set workloadIdentity.gcpServiceAccount"
        )
    if cfg.serving is not None and cfg.serving.backend == "pathways-job" and not cfg.existing:
        for name, limit in (
            (head_pool_name(cluster), NameLimit.GKE_NODE_POOL),
            (head_service_account_id(cluster), NameLimit.GCP_SERVICE_ACCOUNT_ID),
        ):
            problem = check_dns_name(name, limit=limit, min_length=6)
            if problem:
                problems.append(f"{ns}:cluster.name = {json.dumps(cluster)}: the Pathways head's {name!r} {problem}")
    return problems


def capacity_problems(cfg: StackConfig) -> list[str]:
    """Capacity combinations GKE refuses, at the slice, naming its keys as the stack file spells them."""
    found = []
    for i, s in enumerate(cfg.tpu_slices):
        for problem in capacity_rules.problems(s.capacity, s.spot, s.reservation, s.max_run_duration_hours):
            for name in ("max_run_duration_hours",):
                problem = problem.replace(name, to_camel(name))
            found.append(f"{PROJECT_NAMESPACE}:tpuSlices[{i}] ({json.dumps(s.name)}): {problem}")
    return found


_RFC3339_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def zone_problems(cfg: StackConfig) -> list[str]:
    """A slice kind's own zone must be a zone of the stack's region (a slice never spans zones); so must each of the
    CPU pool's zones (``cluster.cpuPoolZones``), named once."""
    found = _cpu_zone_problems(cfg)
    for i, s in enumerate(cfg.tpu_slices):
        if s.zone is not None and zone_problem(s.zone, cfg.region):
            found.append(
                f"{PROJECT_NAMESPACE}:tpuSlices[{i}].zone = {json.dumps(s.zone)}: not a zone of the region "
                f"{cfg.region!r}; valid: {zone_choices(cfg.region)}"
            )
    return found


def cpu_zones(cfg: StackConfig) -> tuple[str, ...]:
    """The zones of the CPU pool the stack creates (:func:`tpu_serving.common.gcp_zones.pool_zones`)."""
    named = tuple(cfg.cluster.cpu_pool_zones) if cfg.cluster.cpu_pool_zones else None
    return pool_zones(cfg.region, cfg.zone, named)


def _cpu_zone_problems(cfg: StackConfig) -> list[str]:
    zones = list(cfg.cluster.cpu_pool_zones or ())
    key = f"{PROJECT_NAMESPACE}:cluster.cpuPoolZones"
    found = [
        f"{key}[{i}] = {json.dumps(z)}: {problem}"
        for i, z in enumerate(zones)
        if (problem := zone_problem(z, cfg.region))
    ]
    return found + [
        f"{key}[{i}] = {json.dumps(z)}: named twice; valid: each of {zone_choices(cfg.region)} at most once"
        for i, z in enumerate(zones)
        if z in zones[:i]
    ]


SPREAD_NODES = 2
"""Nodes the cluster's CPU pool keeps at least: the LWS and JobSet controllers and the metrics adapter
(:class:`tpu_serving.platform.controllers.Availability`) and the endpoint picker
(:data:`tpu_serving.traffic.epp.EPP_HA_REPLICAS`) run two replicas each, required on different nodes (``DoNotSchedule`` spread,
required anti-affinity by ``kubernetes.io/hostname``)."""


def cpu_pool_spread_problem(key: str, min_nodes: int, zones: int = 1) -> str:
    """Why the cluster's CPU pool cannot hold two replicas on different nodes at its minimum (``min_nodes`` in each
    of its ``zones``: GKE's per-zone minimum, :class:`tpu_serving.platform.cluster.CpuPoolArgs`), or ``""``. ``key`` is the
    pool's key path in the stack file."""
    if min_nodes * zones >= SPREAD_NODES:
        return ""
    least = -(-SPREAD_NODES // zones)
    where = f" in each of its {zones} zones" if zones > 1 else ""
    return (
        f"{key}.minNodes = {min_nodes}: the controllers' and the endpoint picker's two replicas are required on "
        f"different nodes, and a pool below {SPREAD_NODES} nodes leaves one of them Pending (its webhooks and the "
        f"router then run on one VM); valid: {least} or more{where}, with maxNodes at least as many"
    )


def cluster_problems(cfg: StackConfig) -> list[str]:
    """Checks across the cluster and the rest of the stack, at the keys to change."""
    return [
        *_groups_problems(cfg),
        *_maintenance_problems(cfg.cluster.maintenance),
        *_tpu_version_problems(cfg),
        *not_ready_window_problems(cfg),
        *startup_window_problems(cfg),
        *_managed_prometheus_problems(cfg),
        *_image_cache_problems(cfg),
        *_cpu_pool_problems(cfg),
    ]


def _cpu_pool_problems(cfg: StackConfig) -> list[str]:
    """One key in both modes: a created cluster's pool (cluster.cpuPool) or, in existing-cluster mode, the description
    of the cluster's CPU nodes the stack runs on (the same key, EXISTING_ARGS_FROM_THE_STACK): the required spreading
    must be satisfiable there too."""
    zones = 1 if cfg.existing else len(cpu_zones(cfg))
    spread = cpu_pool_spread_problem(
        f"{_CLUSTER}.cpuPool", per_zone_minimum(cfg.cluster.cpu_pool.min_nodes, zones), zones
    )
    return [spread] if spread else []


_CLUSTER = f"{PROJECT_NAMESPACE}:cluster"


def _groups_problems(cfg: StackConfig) -> list[str]:
    """RoleBindings to Google Groups need the cluster's Google Groups for RBAC."""
    groups = cfg.tenancy.operators.groups
    if not groups or cfg.cluster.security_group is not None:
        return []
    return [
        f"{PROJECT_NAMESPACE}:tenancy.operators.groups = {json.dumps(groups)}: RoleBindings to Google Groups "
        f"grant nothing unless the cluster has Google Groups for RBAC; set {_CLUSTER}.securityGroup to "
        "gke-security-groups@<your domain> (with these groups nested in it)"
    ]


def _maintenance_problems(m: MaintenanceSettings) -> list[str]:
    """The maintenance window's times in RFC 3339 UTC, then each exclusion's."""
    problems = [
        f"{_CLUSTER}.maintenance.{field_name} = {json.dumps(value)}: must be RFC 3339 in UTC, e.g. 2026-01-03T02:00:00Z"
        for field_name, value in (("windowStart", m.window_start), ("windowEnd", m.window_end))
        if not _RFC3339_UTC.match(value)
    ]
    for i, e in enumerate(m.exclusions):
        problems += _exclusion_problems(f"{_CLUSTER}.maintenance.exclusions[{i}]", e)
    return problems


def _exclusion_problems(at: str, e: MaintenanceExclusion) -> list[str]:
    """One maintenance exclusion: its times in RFC 3339 UTC, and the end a NO_UPGRADES one needs."""
    problems = [
        f"{at}.{field_name} = {json.dumps(when)}: must be RFC 3339 in UTC, e.g. 2026-12-01T00:00:00Z"
        for field_name, when in (("startTime", e.start_time), ("endTime", e.end_time))
        if when is not None and not _RFC3339_UTC.match(when)
    ]
    if e.scope == "NO_UPGRADES" and e.end_time is None:
        problems.append(
            f"{at}.endTime: required with scope NO_UPGRADES (at most 30 days); the other scopes may last until end of support"
        )
    return problems  # an end before the start: MaintenanceExclusion.problems, for programs too


def _managed_prometheus_problems(cfg: StackConfig) -> list[str]:
    """Observability of a serving stack scrapes through Managed Prometheus."""
    if cfg.serving is None or not cfg.observability.enabled or cfg.cluster.managed_prometheus:
        return []
    return [
        f"{PROJECT_NAMESPACE}:observability.enabled = true: scraping the serving pods (PodMonitoring) and "
        f"the kube state metrics of the not-ready alert need Managed Prometheus; set {_CLUSTER}.managedPrometheus "
        "to true or observability.enabled to false"
    ]


def _image_cache_problems(cfg: StackConfig) -> list[str]:
    """A slice's image cache disk needs the cluster's image streaming."""
    if cfg.cluster.image_streaming:
        return []
    return [
        f"{PROJECT_NAMESPACE}:tpuSlices[{i}].imageCacheDisk = {json.dumps(s.image_cache_disk)}: a secondary "
        f"boot disk of container images needs image streaming; set {_CLUSTER}.imageStreaming to true"
        for i, s in enumerate(cfg.tpu_slices)
        if s.image_cache_disk
    ]


GATEWAY_BACKENDS = ("vllm", "jetstream-pathways")
"""Backends whose serving Service a gateway may front (an HTTP server with a health path)."""
INFERENCE_POOL_BACKENDS = ("vllm",)
"""Backends an InferencePool's endpoint picker can serve. Its model server protocol: "The model server
MUST implement OpenAI's Completions and Chat APIs" and export a queue gauge and KV-cache use, named
for vLLM, Triton TensorRT-LLM, trtllm-serve and SGLang (kubernetes-sigs/gateway-api-inference-extension
docs/proposals/003-model-server-protocol/README.md); JetStream's HTTP server has ``/generate`` and
neither metric."""


def disaggregated(cfg: StackConfig) -> bool:
    """Whether the stack serves vLLM disaggregated (``serving.disaggregation``)."""
    return isinstance(cfg.serving, VllmServingConfig) and cfg.serving.disaggregation is not None


def gateway_problems(cfg: StackConfig) -> list[str]:
    """A gateway needs an HTTP serving backend; an InferencePool needs vLLM's metrics; the disaggregated mode needs
    both (nothing else sends a request's prefill leg to a prefill server)."""
    g = cfg.gateway
    if g is None:
        if disaggregated(cfg):
            return [
                f"{PROJECT_NAMESPACE}:serving.disaggregation: requests reach prefill only through the endpoint "
                f"picker's prefill/decode profiles; add {PROJECT_NAMESPACE}:gateway with inferencePool: true"
            ]
        return []
    key = f"{PROJECT_NAMESPACE}:gateway"
    both = existing_address_problem(g.existing_address, g.existing_address_ip)
    if both is not None:
        return [f"{key}.{both}"]
    backend = cfg.serving.backend if cfg.serving is not None else None
    if backend not in GATEWAY_BACKENDS:
        return [
            f"{key}: fronts the serving Service of backend {json.dumps(backend)}, which the library does not "
            f"route yet; valid backends: {', '.join(GATEWAY_BACKENDS)} (serving.backend)"
        ]
    serving = cfg.serving
    if isinstance(serving, VllmServingConfig | PathwaysServingConfig) and (
        cut := gateway_url_map_problem(cfg.workload_identity.namespace, gateway_name(serving.service_name))
    ):
        # GKE review round 68, m1: a long namespace left both Gateway alerts reading nothing, with no word
        return [
            f"{key}: {cut} ({PROJECT_NAMESPACE}:workloadIdentity.namespace {json.dumps(cfg.workload_identity.namespace)}"
            f', and serving.serviceName {json.dumps(serving.service_name)} + "-gateway")'
        ]
    if g.inference_pool and backend not in INFERENCE_POOL_BACKENDS:
        return [
            f"{key}.inferencePool = true: its endpoint picker needs an OpenAI API and the model server "
            f"protocol's queue and KV-cache metrics, which backend {json.dumps(backend)} does not serve; valid backends: "
            f"{', '.join(INFERENCE_POOL_BACKENDS)} (serving.backend), or set inferencePool to false"
        ]
    if disaggregated(cfg) and not g.inference_pool:
        return [
            f"{key}.inferencePool = false: the disaggregated vLLM mode routes through the endpoint picker's "
            "prefill/decode profiles (serving.disaggregation); set inferencePool to true"
        ]
    version = cfg.cluster.min_master_version
    if g.inference_pool and version not in (None, "latest") and gke_version(version) < INFERENCE_POOL_MIN_GKE:
        need = "{}.{}.{}-gke.{}".format(*INFERENCE_POOL_MIN_GKE)
        return [
            f"{PROJECT_NAMESPACE}:cluster.minMasterVersion = {json.dumps(version)}: gateway.inferencePool needs GKE "
            f"{need} or later, which serves the InferencePool CRD (the stack installs none); set it to {need} "
            "or later, or leave it unset on a release channel"
        ]
    return []


def _tpu_version_problems(cfg: StackConfig) -> list[str]:
    """A pinned control plane older than the first GKE version of a slice's TPU generation is refused."""
    version = cfg.cluster.min_master_version
    if version in (None, "latest"):
        return []
    found = []
    for i, s in enumerate(cfg.tpu_slices):
        need = s.shape.generation.min_gke
        if need is not None and older_than(version, need):
            found.append(
                f"{PROJECT_NAMESPACE}:cluster.minMasterVersion = {json.dumps(version)}: tpuSlices[{i}] "
                f"({s.shape.slice_name}) needs GKE {need} or later for {s.shape.generation.name} node pools; set it to "
                f"{need} or later, or leave it unset on a release channel"
            )
    return found


def serving_problems(cfg: StackConfig) -> list[str]:
    """Checks across the serving config and the rest of the stack, at the keys to change."""
    serving = cfg.serving
    if serving is None:
        return []
    key = f"{PROJECT_NAMESPACE}:serving"
    kinds = {s.name: s for s in cfg.tpu_slices}
    unknown = [n for n in serving.slices if n not in kinds]
    if unknown:
        return [f"{key}.slices = {json.dumps(unknown)}: not in tpuSlices; valid: {', '.join(kinds)}"]
    chosen = [kinds[n] for n in serving.slices]
    shapes = {(k.shape.machine_type.name, k.shape.topology) for k in chosen}
    problems = []
    if len(shapes) > 1:
        problems.append(f"{key}.slices: the serving slices must share one shape; got {sorted(shapes)}")
    if problems:
        return problems
    pools = sum(k.count for k in chosen)
    return [
        *BACKENDS[serving.backend].problems(cfg, serving, chosen[0].shape, pools),
        *full_outage_problems(cfg),
        *upgrade_overlap_problems(cfg),
        *paging_problems(cfg),
        *fallback_problems(cfg),
    ]


def paging_problems(cfg: StackConfig) -> list[str]:
    """A serving stack that creates its alert policies names a notification channel, or says
    ``observability.unpaged: true`` (SRE review B1): an alert that notifies nobody pages nobody, and an outage
    is then seen only by someone watching Cloud Monitoring."""
    watch = cfg.observability
    if not watch.enabled or watch.cloud_resources != CreateOrExisting.CREATE or watch.notification_channels:
        return []
    if watch.unpaged:
        return []
    return [
        f"{PROJECT_NAMESPACE}:observability.notificationChannels = []: the stack's alert policies would notify "
        "nobody, so an outage is seen only by someone looking at Cloud Monitoring; name a channel "
        "(projects/<project>/notificationChannels/<id>: gcloud beta monitoring channels list), or set "
        "observability.unpaged to true to say so (valid: true, false)"
    ]


def full_outage(serving: object) -> tuple[str, str]:
    """Why a disruption of ``serving`` stops the whole service, or ``""``: a Saxml cell (one JobSet whose slices
    restart together), or LeaderWorkerSet serving of one group at most with no spare slice (rollout in place).
    The disaggregated vLLM roles and a PathwaysJob are left to their own preview lines. Then what else avoids it."""
    if isinstance(serving, SaxmlServingConfig):
        return (
            "the Saxml cell is one JobSet whose model-server slices restart together",
            "a Saxml cell has no second group",
        )
    if isinstance(serving, VllmServingConfig) and serving.disaggregation is not None:
        return "", ""
    if isinstance(serving, VllmServingConfig | PathwaysServingConfig) and scaling.groups(serving) == 1:
        held = "autoscaling.maxReplicas" if serving.autoscaling is not None else "replicas"
        if serving.rollout == Rollout.IN_PLACE:
            why = f"the serving is one group ({held} 1) with no spare slice (rollout in-place)"
            return why, f"or set {held} to 2 with a slice each"
    return "", ""


FULL_OUTAGE = (
    "a node failure, a repair, TPU host maintenance, a node upgrade or a rollout stops the whole service until the "
    "slice is back and the model has reloaded"
)
"""What each disruption does to serving of one group (:func:`full_outage`), in the refusal and the production gap."""


def full_outage_problems(cfg: StackConfig) -> list[str]:
    """A stack whose serving is one group and no spare slice, or a Saxml cell, must say ``serving.singleGroup:
    accepted`` (SRE review B2): each of its disruptions is a full outage until the slice is back and has reloaded."""
    serving = cfg.serving
    why, instead = full_outage(serving)
    if not why or getattr(serving, "single_group", None) == "accepted":
        return []
    return [
        f"{PROJECT_NAMESPACE}:serving.singleGroup = null: {why}, so {FULL_OUTAGE}; "
        f'set it to "accepted" to say so (valid: accepted); {instead}'
    ]


def upgrade_overlap_problems(cfg: StackConfig) -> list[str]:
    """Several groups on a cluster the stack creates, each reloading for an hour or more, with node upgrades on their
    own: GKE honours a disruption budget for an hour in an automatic node upgrade (:data:`~tpu_serving.backends.
    rollout.UPGRADE_WAIT_MINUTES`), so the next slice's upgrade can take a second group while the first reloads, and
    nothing serves (GKE and SRE reviews round 40, M2). One group is :func:`full_outage_problems`' case; an existing
    cluster's upgrades are its owner's."""
    startup = reload_outlasting_upgrade_wait(cfg.serving)
    if startup is None or cfg.existing or node_upgrades_held(cfg):
        return []
    return [
        f"{PROJECT_NAMESPACE}:cluster.maintenance.exclusions: none holds GKE's node upgrades back, while a group "
        f"reloads for up to {startup // 60} minutes (serving.probes.maxStartupSeconds {startup}), no less than the "
        f"{UPGRADE_WAIT_MINUTES} minutes GKE waits on the disruption budget in an automatic upgrade: the next "
        "slice's upgrade can take a second group down while the first reloads, and nothing serves; add an exclusion "
        "of scope NO_MINOR_OR_NODE_UPGRADES and upgrade the TPU pools one at a time (docs/upgrade.md), or lower "
        f"serving.probes.maxStartupSeconds below {UPGRADE_WAIT_MINUTES * 60} if a group reloads faster"
    ]


def serving_probe(cfg: StackConfig) -> ProbeTarget | None:
    """The serving probe's request (:mod:`tpu_serving.operations.prober`): the backend's, when the stack is watched
    (``observability.enabled``) with ``observability.servingProbe`` on; None otherwise, or when the backend has none."""
    if cfg.serving is None or not cfg.observability.enabled or not cfg.observability.serving_probe:
        return None
    return BACKENDS[cfg.serving.backend].probe(cfg.serving)


def namespace_pods(cfg: StackConfig) -> list[PodSet]:
    """The pods the stack puts in its namespace (:mod:`tpu_serving.common.quota`): the serving backend's, the endpoint
    picker's (with an InferencePool), the serving probe's and the host-maintenance gate's; none while ``serving`` names a slice the stack lacks
    (reported elsewhere)."""
    serving = cfg.serving
    if serving is None:
        return []
    shapes = {s.name: s.shape for s in cfg.tpu_slices}
    named = serving_kind_names(serving)
    if not named <= set(shapes):
        return []
    pools = sum(1 for _, _, s in cfg.slices if s.name in serving.slices)
    found = list(BACKENDS[serving.backend].quota_pods(serving, shapes, pools))
    if cfg.gateway is not None and cfg.gateway.inference_pool:
        found.append(epp_pods(to_settings(cfg.gateway, GatewaySettings)))
    if serving_probe(cfg) is not None:
        found.append(prober_pods())
    return found + ([gate_pods()] if maintenance_gate_runs(cfg) else [])


def tenancy_quota_problems(cfg: StackConfig) -> list[str]:
    """A ``tenancy.quota`` CPU or memory figure below what the stack's pods need at their peak
    (:mod:`tpu_serving.common.quota`), naming both figures and what makes up the derived one."""
    pods = namespace_pods(cfg)
    if not pods:
        return []
    at = f"{PROJECT_NAMESPACE}:tenancy.quota"
    return quota_problems(derive(pods), cfg.tenancy.quota.cpu, cfg.tenancy.quota.memory, (f"{at}.cpu", f"{at}.memory"))
