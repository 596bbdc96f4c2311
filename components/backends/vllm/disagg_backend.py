"""What the deployment asks of the ``vllm`` backend in its disaggregated mode (``serving.disaggregation``): the
DisaggregatedSet and its Service, an HPA per autoscaled role, the roles' metrics, the pods' ingress and the
flows between the roles."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from ...catalog import SliceShape
from ...common.naming import gateway_name
from ...common.quota import PodSet
from ...common.settings import PROJECT_NAMESPACE, to_settings
from ...operations.autoscaling import (
    DEFAULT_SCALE_DOWN_PERIOD_SECONDS,
    MAX_SCALING_PERIOD_SECONDS,
    AutoscalingSettings,
    ServingAutoscaler,
    ServingAutoscalerArgs,
    scale_down_window,
)
from ...operations.observability import ScrapeTarget, ServingMetrics
from ...operations.observability_roles import RoleSignals
from ...platform.controllers import ControllerInstall
from ...platform.lws import DISAGGREGATED_SURGE, Rollout
from ...tenancy.tenant import IsolatedPods, PodFlow, PortRange
from ...traffic.gateway_settings import LB_BACKEND_KEEPALIVE_SECONDS
from .. import scaling
from ..base import Built, Gap, Platform, ServingEndpoint, Stack
from ..rollout import CONTAINER_RESTART, HOST_MAINTENANCE, stack_maintenance, stack_upgrade_schedule
from .args import VllmEngineSettings, VllmRequests, VllmServingArgs, WeightsLoader
from .disagg_args import VllmDisaggregatedArgs
from .disagg_checks import role_metric, roles
from .disagg_component import VllmDisaggregatedServing
from .disagg_pods import role_leaders
from .facts import HTTP_PORT, HTTP_RESPONSES, METRICS_PATH, ROLE_LABEL, SIGNALS, VllmMetric
from .kv import (
    BULK_PORTS,
    DECODE_SERVER_PORT,
    DS_API_VERSION,
    DS_NAME_LABEL,
    DS_ROLE_LABEL,
    KV_TRANSFER_PORT,
    ROLE_SCALER_KIND,
    SIDE_CHANNEL_PORT,
    SIDECAR_IDLE_SECONDS,
    KvRole,
    KvTransfer,
    role_scaler,
)
from .lifecycle import shutdown
from .quota import group_pods
from .settings import VllmServingConfig, memory_cache_gib

TRANSFER_TIME = "vllm:tpu_kv_transfer_time_ms"
"""Histogram of the KV pulls, recorded on decode (tpu-inference 0.29.0 tpu_connector_stats.py l.155-260, recorded in
``TPUConnectorWorker._pull_kv``, tpu_connector.py l.857-871; wired into vLLM's Prometheus logger, vllm 0.29.0
kv_connector/v1/metrics.py l.154-175, loggers.py l.483-485). Whether the Ray workers of the other hosts report
theirs through the leader's ``/metrics`` was not verified."""


def leaders(serving: VllmServingConfig) -> dict[str, str]:
    """Labels of both roles' leaders: the InferencePool's endpoints, which the picker sorts by ``llm-d.ai/role``."""
    return {DS_NAME_LABEL: serving.name, ROLE_LABEL: "leader"}


def ingress(serving: VllmServingConfig) -> tuple[dict[str, str], list[int]]:
    """The decode leaders take clients on the serving port (their sidecar): the Gateway's proxies, the allowed
    namespaces and ranges. Prefill's leaders do not: a client that named a prefill server would have it compute a
    prompt and hold its KV blocks for the pull timeout; only decode (the ``prefill-leg`` flow), the endpoint picker
    and the load balancer's health checks reach them (the gateway's ``<gateway>-pool-ingress``)."""
    return role_leaders(serving.name, KvRole.DECODE), [HTTP_PORT]


PROBE_COVERS = (
    "it goes through the Service to one decode leader's routing sidecar and its vLLM server: without an "
    "x-prefiller-host-port header the sidecar has decode compute the prompt itself (llm-d/llm-d-router@v0.10.0 "
    "pkg/sidecar/proxy/chat_completions.go l.60-61, l.103-108; POST /v1/completions goes to that handler, proxy.go "
    "l.628), so it does not cover prefill, the KV transfer, the endpoint picker nor the Gateway's load balancer"
)
"""What the serving probe (:func:`.backend.probe`) covers in the disaggregated mode, and what not."""

LB_HEALTH_PATH = "/ping"
"""The load balancer's health check path on both roles' serving port. vLLM serves ``GET /ping`` with its ``/health``
handler, which asks the engine (vllm-tpu 0.29.0 wheel: vllm/entrypoints/serve/sagemaker/api_router.py l.47-52,
registered unconditionally by vllm/entrypoints/launchers/api_server/routers.py l.28-32;
vllm/entrypoints/serve/instrumentator/health.py l.22-33: 503 once the engine is dead). On a decode leader the
serving port is the router's sidecar, whose own ``GET /health`` answers 200 whatever the engine does
(llm-d/llm-d-router@v0.10.0 pkg/sidecar/proxy/proxy.go l.624-626), while every other path it does not route
itself goes to the local vLLM (l.627-635: ``mux.Handle("/", s.decoderProxy)``): ``/ping`` reaches the engine of
each role through one port."""


def scrape_targets(serving: VllmServingConfig) -> list[ScrapeTarget]:
    """Each role's leaders, on vLLM's own port (decode's behind the sidecar, :data:`~.kv.DECODE_SERVER_PORT`)."""
    return [
        ScrapeTarget(
            f"{serving.name}-{r.value}-leaders",
            role_leaders(serving.name, r),
            DECODE_SERVER_PORT if r == KvRole.DECODE else HTTP_PORT,
            METRICS_PATH,
        )
        for r, _ in roles(serving)
    ]


def metrics(serving: VllmServingConfig) -> ServingMetrics:
    """vLLM's signals over both roles, and per role (its PodMonitoring's ``job``): time to first token, the queue, and
    on decode the KV transfer time. The roles' LeaderWorkerSets are named by the controller, so their group
    recreations are not watched by name. The error rate counts the responses of both roles' vLLM servers; the decode
    leaders' routing sidecar, which is not scraped, is not counted."""
    targets = scrape_targets(serving)
    return ServingMetrics(
        scrape=targets,
        signals=SIGNALS,
        http_responses=dataclasses.replace(HTTP_RESPONSES, jobs=tuple(t.name for t in targets)),
        autoscalers=tuple(role_scaler(serving.name, r) for r, c in roles(serving) if c.autoscaling is not None),
        roles=[
            RoleSignals(
                role=r.value,
                job=t.name,
                pod_pattern=f"{serving.name}-[0-9]+-[0-9a-f]+-{r.value}-.+",
                # A leader is ``<lws>-<group>``, its LeaderWorkerSet ``<ds>-<slice>-<revision>-<role>``
                # (kubernetes-sigs/lws v0.10.0 pkg/utils/disaggregatedset/utils.go l.93-95 GenerateName). GKE's
                # kube state metrics carry no pod labels (no kube_pod_labels), so the pods are found by name.
                leader_pattern=f"{serving.name}-[0-9]+-[0-9a-f]+-{r.value}-[0-9]+",
                requests_waiting=VllmMetric.REQUESTS_WAITING.value,
                requests_running=VllmMetric.REQUESTS_RUNNING.value,
                time_to_first_token=VllmMetric.TIME_TO_FIRST_TOKEN.value,
                transfer_time=TRANSFER_TIME if r == KvRole.DECODE else None,
                generation_tokens=f"{VllmMetric.GENERATION_TOKENS.value}_total",
            )
            for (r, _), t in zip(roles(serving), targets, strict=True)
        ],
    )


def isolation(serving: VllmServingConfig) -> IsolatedPods:
    """The roles' pods leave the ``same-namespace`` policy; they accept (tpu-inference 0.29.0 tpu_connector.py, read
    in docs/design/disaggregated-vllm.md sections 1.3 and 4):

    - within a role, any port from the role's pods: Ray between a group's leader and workers (GCS 6379 and Ray's
      dynamic ports, as the single-engine mode's groups have from ``same-namespace``);
    - on prefill, from decode's pods: the transfer server's control port, the side channel and the bulk transfer's
      ephemeral ports (decode connects to each; prefill never connects to decode, l.570-582, l.882-905);
    - on prefill's leaders, the serving port from decode's leaders (the sidecar's prefill leg);
    - on decode's leaders, the serving port and decode's vLLM port from the namespace's other pods: clients in the
      namespace call it. Prefill's leaders take no client: the endpoint picker and the load balancer's health
      checks reach their serving port through the gateway's own policy (:func:`tpu_serving.traffic.gateway.pool_ingress`).
    """
    name = serving.name
    pods = {r: {DS_NAME_LABEL: name, DS_ROLE_LABEL: r.value} for r in KvRole}
    p, d = KvRole.PREFILL, KvRole.DECODE
    flows = [PodFlow(f"{name}-{r.value}-within-role", pods[r], pods[r]) for r in KvRole]
    flows += [
        PodFlow(
            f"{name}-kv-from-decode",
            pods[p],
            pods[d],
            [PortRange(KV_TRANSFER_PORT), PortRange(SIDE_CHANNEL_PORT), PortRange(*BULK_PORTS)],
        ),
        PodFlow(f"{name}-prefill-leg", role_leaders(name, p), role_leaders(name, d), [PortRange(HTTP_PORT)]),
        PodFlow(
            f"{name}-from-namespace",
            role_leaders(name, d),
            None,
            [PortRange(HTTP_PORT), PortRange(DECODE_SERVER_PORT)],
        ),
    ]
    return IsolatedPods(DS_NAME_LABEL, name, flows)


def from_zero_pools(serving: VllmServingConfig, by_kind: Mapping[str, Sequence[str]]) -> set[str]:
    """Each role's node pools beyond its minimum replicas (its fixed replicas, without autoscaling) start empty and
    scale from zero: the HPA's further groups and the rollout's surge group, on the role's spare slice."""
    out: set[str] = set()
    for _, r in roles(serving):
        pools = list(by_kind.get(r.slice, ()))
        keep = r.autoscaling.min_replicas if r.autoscaling is not None else r.replicas
        out |= set(pools[keep:])
    return out


def quota_pods(serving: VllmServingConfig, shapes: Mapping[str, SliceShape]) -> list[PodSet]:
    """Each role's groups at its maximum; a rollout adds one group to every role at once
    (:data:`~tpu_serving.platform.lws.DISAGGREGATED_SURGE`); the decode leaders run the routing sidecar."""
    requests = to_settings(serving.requests, VllmRequests)
    gcsfuse = serving.loader == WeightsLoader.GCSFUSE or serving.compilation_cache
    return [
        PodSet(
            f"DisaggregatedSet {serving.name} role {r.value}",
            group_pods(
                requests,
                shapes[cfg.slice],
                gcsfuse=gcsfuse,
                prefetch=serving.loader == WeightsLoader.GCSFUSE,
                decode=r == KvRole.DECODE,
                cache_gib=memory_cache_gib(serving, shapes[cfg.slice]),
            ),
            cfg.autoscaling.max_replicas if cfg.autoscaling is not None else cfg.replicas,
            surge=DISAGGREGATED_SURGE,
            rollout=f"DisaggregatedSet {serving.name}",
        )
        for r, cfg in roles(serving)
    ]


def restart_unit_chips(serving: VllmServingConfig, chips: int) -> int:
    """One group (one slice of its role) restarts at once (each role's spare slice counts as one more group's)."""
    groups = sum((r.autoscaling.max_replicas if r.autoscaling else r.replicas) + 1 for _, r in roles(serving))
    return chips // max(groups, 1)


def arguments(platform: Platform, serving: VllmServingConfig, base: VllmServingArgs) -> VllmDisaggregatedArgs:
    """The component's arguments: both roles' engines from the shared settings (``base``, the single-engine mode's
    arguments) and each role's own."""
    assert serving.disaggregation is not None
    sidecar = serving.disaggregation.sidecar_image
    pull_timeout = serving.disaggregation.kv_pull_timeout_seconds
    pools = {s.name: list(platform.settings.node_pool_names(s)) for s in platform.settings.tpu_slices}

    def role(r: KvRole) -> VllmServingArgs:
        cfg = dict(roles(serving))[r]
        return dataclasses.replace(
            base,
            name=f"{serving.name}-{r.value}",
            # a role's cache folders: <name>/<role>/<group>/<worker>, so no two pods of either role share one
            cache_path=f"{base.cache_path}/{r.value}",
            replicas=cfg.replicas,
            autoscaled=cfg.autoscaling is not None,
            engine=to_settings(cfg.engine, VllmEngineSettings),
            # the sidecar's SSRF allowlist: the pods of the stack's InferencePool (decode only reads it)
            kv_transfer=KvTransfer(
                r,
                sidecar,
                pull_timeout_seconds=pull_timeout,
                inference_pool=f"{base.namespace}/{gateway_name(serving.service_name)}",
            ),
            node_pools=pools[cfg.slice],
            # a revision's new group comes up before the old one goes (the DisaggregatedSet's default), on the
            # role's spare slice, which scales from zero
            rollout=Rollout.SURGE,
        )

    return VllmDisaggregatedArgs(
        prefill=role(KvRole.PREFILL),
        decode=role(KvRole.DECODE),
        name=serving.name,
        service_name=serving.service_name,
        namespace=base.namespace,
        labels=platform.k8s_labels,
    )


ROLLOUT_SUMMARY = (
    "a change to either role's template is a new revision of the DisaggregatedSet, which rolls both roles with "
    "surge: each role's new group comes up on a free slice of its kind (with every group up, the role's spare, which "
    "scales from zero) and loads the model before the role's old group goes; the service keeps serving from the "
    "old groups"
)
"""What a rollout of the disaggregated mode does (LWS v0.10.0 pkg/controllers/disaggregatedset planner.go
DefaultRollingUpdateConfig: maxSurge 1, maxUnavailable 0; the revision hash covers every role, utils.go l.93-111)."""
DRAIN_SUMMARY = (
    "a node drain or upgrade takes one group of each role at a time (a disruption budget per role: one eviction, "
    "then none until the group serves again); with one group of a role, a drain of its slice takes that role down until the slice is back and the "
    f"group has loaded; {CONTAINER_RESTART}"
)
"""What a drain does to the disaggregated mode (:func:`tpu_serving.platform.lws.group_disruption_budget`, one per role)."""


def upgrade_summary(cfg: Stack) -> str:
    """What GKE's node upgrades and TPU host maintenance do to the disaggregated mode: when they come (the same
    builder as the other stacks', :func:`~tpu_serving.backends.rollout.stack_upgrade_schedule`), and that each takes
    one role's slice like a drain (:data:`DRAIN_SUMMARY`)."""
    return (
        f"{stack_upgrade_schedule(cfg)}; each upgrade recreates a slice's VMs like a drain, one group of each role at "
        "a time: with one group of a role, that role, which every request needs, stops until the slice is back and "
        f"the group has loaded; {HOST_MAINTENANCE}"
    )


# kubernetes-sigs/lws v0.10.0 keps/766-DisaggregatedSet/README.md l.333-348 ("Graduation Criteria"): the API is at
# "Alpha (v0.1)"; "Beta (v0.2)" asks "Production usage feedback incorporated", "Stable (v1.0)" "Proven stability in
# production environments".
ROLE_DISRUPTION = (
    "its node failure, repair, TPU host maintenance or upgrade stops the service until the slice is back and the "
    "role has reloaded"
)
ALPHA = "the DisaggregatedSet that runs the roles is an alpha API (LWS v0.10.0: beta waits for production feedback)"
MULTI_HOST_ROLES = "multi-host prefill and decode roles are shown working nowhere upstream"
"""Roles over several VMs each (Ray across a slice's VMs): tpu-inference's CI runs its multi-host P/D example as
processes on one VM (examples/disagg/run_disagg_multi_host.sh l.189-200), its daily GKE run and llm-d's TPU P/D
guides place one host per role (docs/design/disaggregated-vllm.md, sections 1.5 and 4)."""


def alpha_gap(shape: SliceShape) -> Gap:
    """The DisaggregatedSet's alpha API, and with roles over several VMs (:attr:`~tpu_serving.catalog.SliceShape.
    multi_host`) that no upstream run shows them (:data:`MULTI_HOST_ROLES`)."""
    return Gap("serving.disaggregation", "set", f"{ALPHA}, and {MULTI_HOST_ROLES}" if shape.multi_host else ALPHA)


def production_gaps(serving: VllmServingConfig, shape: SliceShape) -> list[Gap]:
    """What keeps the disaggregated mode from an SLO: :func:`alpha_gap` and each role that may keep one group (every
    request needs both roles); none for one engine per group (:func:`.backend.production_gaps`)."""
    if serving.disaggregation is None:
        return []
    gaps = [alpha_gap(shape)]
    for role, cfg in roles(serving):
        if (n := cfg.autoscaling.min_replicas if cfg.autoscaling is not None else cfg.replicas) < 2:
            at = f"serving.disaggregation.{role.value}"
            key = f"{at}.autoscaling.minReplicas" if cfg.autoscaling is not None else f"{at}.replicas"
            gaps.append(Gap(key, str(n), f"one {role.value} group, which every request needs: {ROLE_DISRUPTION}"))
    return gaps


def caveats(pull_timeout_seconds: int, shape: SliceShape) -> list[str]:
    """What the preview says of the mode's upstream status (docs/backends.md, "Upstream status"), with the stack's KV
    pull timeout (``serving.disaggregation.kvPullTimeoutSeconds``, :data:`~.kv.PULL_TIMEOUT_ENV`) and, for roles on
    ``shape`` over several VMs, :data:`MULTI_HOST_ROLES`."""
    hosts = f"{MULTI_HOST_ROLES} (tpu-inference's CI emulates hosts on one VM); " if shape.multi_host else ""
    return [
        f"disaggregated mode: {hosts}the DisaggregatedSet API is alpha (LWS v0.10.0); validate on your slices first",
        "disaggregated mode: tpu-inference 0.29.0's connector may hang decode on a failed pull (the role's 'engine "
        "stalled' alert finds it; the leader's progress checks, serving.probes.readyStallSeconds and stallSeconds, "
        "take it out of the pool and then restart it, as /health alone would not) and holds an aborted "
        f"request's prefill blocks for the KV pull timeout, {pull_timeout_seconds} s (fixed in 0.32.0, which this "
        "release does not pin): docs/backends.md",
        f"disaggregated mode: a request that waits longer than the KV pull timeout ({pull_timeout_seconds} s, "
        "serving.disaggregation.kvPullTimeoutSeconds) in decode's queue finds its prefilled blocks recycled; a "
        f"stopping prefill group waits as long, unready, before it drains",
        f"disaggregated mode: the router's sidecar on decode closes idle client connections after "
        f"{SIDECAR_IDLE_SECONDS} s (llm-d-router v0.10.0, not settable), before the load balancer's fixed "
        f"{LB_BACKEND_KEEPALIVE_SECONDS} s: a request the load balancer sends on a connection the sidecar has just "
        "closed fails (502)",
    ]


def scale_down_period(args: VllmDisaggregatedArgs, role: KvRole) -> int:
    """The seconds between two group removals of a role's HPA (:attr:`~tpu_serving.operations.autoscaling.ServingAutoscalerArgs.
    scale_down_period_seconds`): a prefill group's grace period, so that one prefill group has waited out the KV pull
    timeout and drained before the next one leaves (:func:`.pods.shutdown`), at most the 1800 s the HPA API admits;
    decode keeps the default."""
    if role != KvRole.PREFILL:
        return DEFAULT_SCALE_DOWN_PERIOD_SECONDS
    return min(shutdown(args.prefill).grace_seconds, MAX_SCALING_PERIOD_SECONDS)


def role_scale_down_window(auto: AutoscalingSettings, engine: VllmServingArgs) -> int:
    """A role's HPA scale-down window: the stack's, else the role's startup window (:func:`scale_down_window`)."""
    return scale_down_window(auto.scale_down_stabilization_seconds, engine.probes.max_startup_seconds)


def scale_down_summary(serving: VllmServingConfig, args: VllmDisaggregatedArgs) -> str:
    """What removing groups does to each role (the ``rollout`` output's ``scaleDown``, which the preview prints). A
    role's HPA sets its DisaggregatedSetRoleScaler's replicas (kubernetes-sigs/lws v0.10.0 scaler_manager.go
    l.177-187), which become the role's LeaderWorkerSet's; that removes its highest-index group, Ready or not
    (:attr:`~tpu_serving.backends.rollout.RolloutPlan.scale_down`)."""
    parts = []
    for r, c in roles(serving):
        engine = args.prefill if r == KvRole.PREFILL else args.decode
        grace = f"its pods drain for up to {shutdown(engine).grace_seconds} s"
        if c.autoscaling is None:
            parts.append(f"{r.value}: no autoscaling, {c.replicas} group(s) fixed by the stack; {grace}")
            continue
        auto = to_settings(c.autoscaling, AutoscalingSettings)
        parts.append(
            f"{r.value}: the HPA removes at most one group every {scale_down_period(args, r)} s, once its metric has "
            f"stayed low for {role_scale_down_window(auto, engine)} s, never below {auto.min_replicas}; {grace}"
        )
    return (
        "; ".join(parts) + "; a role's LeaderWorkerSet removes its highest-index group, Ready or not, so while a "
        "lower group reloads a scale-down can remove the role's only Ready group"
    )


def build(platform: Platform, serving: VllmServingConfig, install: ControllerInstall, base: VllmServingArgs) -> Built:
    """The DisaggregatedSet and its Service on both roles' node pools (``base``: the engine's arguments from the
    settings), and an HPA per autoscaled role."""
    assert serving.disaggregation is not None
    args = arguments(platform, serving, base)
    workload = VllmDisaggregatedServing(f"{platform.name}-serving", args, opts=platform.workload_options(install))
    built = Built(
        outputs={
            "disaggregatedSet": serving.name,
            "service": workload.service.metadata.name,
            "portForward": workload.port_forward,
            "completionExample": workload.completion_example,
            "roles": {r.value: {"slice": c.slice, "leaders": role_leaders(serving.name, r)} for r, c in roles(serving)},
            "rollout": {
                "summary": ROLLOUT_SUMMARY,
                "drain": DRAIN_SUMMARY,
                "upgrade": upgrade_summary(platform.settings),
                "scaleDown": scale_down_summary(serving, args),
                "maintenance": stack_maintenance(platform.settings, [c.slice for _, c in roles(serving)]),
            },
            "caveats": caveats(serving.disaggregation.kv_pull_timeout_seconds, platform.slices.shape),
        },
        endpoint=ServingEndpoint(serving.service_name, HTTP_PORT, LB_HEALTH_PATH, leaders(serving), disaggregated=True),
    )
    scaled = [(r, c) for r, c in roles(serving) if c.autoscaling is not None]
    if not scaled:
        return built
    first = to_settings(scaled[0][1].autoscaling, AutoscalingSettings)
    adapter = scaling.install_adapter(platform, built, first)
    key = f"{PROJECT_NAMESPACE}:serving.disaggregation.{scaled[0][0].value}.autoscaling.adapterIam"
    if not platform.on_platform:  # a model stack's platform owns the adapter's grant (GKE review m2)
        built.cloud.append(scaling.adapter_grant(platform.settings.project, first.adapter_iam, key))
    out = {}
    for r, c in scaled:
        auto = to_settings(c.autoscaling, AutoscalingSettings)
        scaler = ServingAutoscaler(
            f"{platform.name}-{r.value}-autoscaler",
            ServingAutoscalerArgs(
                project=platform.settings.project,
                namespace=platform.identity.namespace_name,
                target=workload.role_scalers[r.value],
                settings=auto,
                metric=role_metric(r, c),
                labels=platform.k8s_labels,
                target_api_version=DS_API_VERSION,
                target_kind=ROLE_SCALER_KIND,
                grant_adapter_viewer=(r, c) == scaled[0] and not platform.on_platform,
                scale_down_period_seconds=scale_down_period(args, r),
                startup_seconds=(args.prefill if r == KvRole.PREFILL else args.decode).probes.max_startup_seconds,
            ),
            opts=platform.options(adapter, workload, platform.apis),
        )
        out[r.value] = {
            "roleScaler": workload.role_scalers[r.value],
            "minReplicas": auto.min_replicas,
            "maxReplicas": auto.max_replicas,
            "metric": scaler.metric,
            "targetPerReplica": auto.target,
        }
    built.outputs["autoscaling"] = out
    return built
