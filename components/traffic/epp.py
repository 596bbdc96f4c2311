"""The endpoint picker (EPP) of an InferencePool: llm-d/llm-d-router@v0.10.0's, as its ``llm-d-router-gateway``
chart deploys it on GKE (see :mod:`tpu_serving.traffic.gateway` for the sources); the objects the
:class:`~tpu_serving.traffic.gateway.ServingGateway` creates for it."""

import hashlib
import json
from collections.abc import Mapping, Sequence

import pulumi_kubernetes as k8s

from ..common.podspec import container_security, pod_security, requests
from ..common.quota import ContainerRequests, PodSet, PodShape
from ..common.spread import zone_spread_args
from .gateway_settings import HEALTH_CHECK_RANGES, INFERENCE_API, GatewaySettings, ServingGatewayArgs

EPP_USER = 65532
"""The ``nonroot`` user of gcr.io/distroless/static:nonroot, the endpoint picker's base image
(llm-d/llm-d-router@v0.10.0 Dockerfile.epp l.6 ``ARG BASE_IMAGE=gcr.io/distroless/static:nonroot``, l.50
``USER 65532:65532``; uid and gid 65532: GoogleContainerTools/distroless#443, which names them for the
``:nonroot`` images)."""
EPP_GRPC_PORT = 9002
"""The picker's ext-proc gRPC port: its default (llm-d/llm-d-router@v0.10.0 pkg/epp/server/options.go l.41
``DefaultGrpcPort = 9002``, flag ``--grpc-port`` l.164), which the chart leaves as it is and names in the Service
and the InferencePool (config/charts/routerlib/templates/_deployment.yaml l.134-135, _service.yaml l.56-59,
_inferencepool.yaml l.35-36; values.yaml l.13 ``extProcPort: 9002``)."""
EPP_HEALTH_PORT = 9003
"""Its gRPC health port (options.go l.151 default, ``--grpc-health-port`` l.214; the chart passes it,
_deployment.yaml l.113-115, and probes it, l.143-165). GKE's Gateway controller health-checks the picker on gRPC
9003 unless a HealthCheckPolicy on its Service names another port (config/charts/llm-d-router-gateway/templates/
gke.yaml l.38-41)."""
EPP_METRICS_PORT = 9090
"""Its metrics port (options.go l.150 default, ``--metrics-port`` l.213; _deployment.yaml l.138-139,
_service.yaml l.60-62)."""
EPP_LIVENESS_SERVICE = "liveness"
"""The gRPC health service every running replica passes under leader election (cmd/epp/runner/health.go l.51,
l.90-96): the chart's liveness probe for more than one replica (_deployment.yaml l.143-147)."""
EPP_POOL_GROUP = INFERENCE_API.split("/")[0]
"""``--pool-group``, as the chart passes it (_deployment.yaml l.102-103); the picker's default too
(pkg/common/routing/common.go l.28, options.go l.136)."""
EPP_OBJECTIVE_GROUPS: Sequence[str] = ("inference.networking.x-k8s.io", "llm-d.ai")
"""API groups of the InferenceObjective and InferenceModelRewrite kinds the picker watches: ``llm-d.ai`` first,
else the legacy ``inference.networking.x-k8s.io``, whichever the cluster serves (pkg/epp/server/controller_config.go
l.35-42, l.71-88); the chart's Role grants both (config/charts/llm-d-router-gateway/templates/rbac.yaml l.9-14)."""
EPP_CONFIG_FILE = "default-plugins.yaml"
EPP_METRICS_PLUGINS = """- type: metrics-data-source
  parameters:
    scheme: "http"
    path: "/metrics"
    insecureSkipVerify: true
- type: core-metrics-extractor
"""
"""The data layer of every configuration: the model servers' metrics scraped over HTTP from each one's target port
(pkg/epp/framework/plugins/datalayer/source/metrics/datasource.go l.47-52) and the core metrics extracted."""
EPP_PLUGINS = (
    """apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
- type: kv-cache-utilization-scorer
- type: prefix-cache-scorer
"""
    + EPP_METRICS_PLUGINS
    + """schedulingProfiles:
- name: default
  plugins:
  - pluginRef: queue-scorer
    weight: 2
  - pluginRef: kv-cache-utilization-scorer
    weight: 2
  - pluginRef: prefix-cache-scorer
    weight: 3
"""
)
"""The chart's default plugin configuration for vLLM over HTTP without the latency predictor
(llm-d/llm-d-router@v0.10.0 config/charts/routerlib/templates/_config.yaml l.8-81 with values.yaml l.21-27,
l.162-164): apiVersion ``llm-d.ai/v1alpha1`` (apix/config/v1alpha1/zz_generated.register.go l.15-18; the
``inference.networking.x-k8s.io/v1alpha1`` of gateway-api-inference-extension still loads but is deprecated,
pkg/epp/config/loader/configloader.go l.53, l.91-93); each plugin type a beta one of the release
(cmd/epp/runner/runner.go l.611, l.624-625, l.692-693). The metrics source scrapes each model server's
InferencePool target port (pkg/epp/framework/plugins/datalayer/source/metrics/datasource.go l.47-52)."""

ROLLOUT_SCREENER = "disaggregatedset-rollout-screener"
"""The DisaggregatedSet rollout screener's plugin type (llm-d/llm-d-router@v0.10.0 pkg/epp/framework/plugins/
requestcontrol/screener/disaggregatedsetrollout/plugin.go l.43), alpha (cmd/epp/runner/runner.go l.569)."""
PD_DECIDER = "always-disagg-pd-decider"
"""The decider that disaggregates every request (pkg/epp/framework/plugins/scheduling/profilehandler/disagg/
always_disagg_pd_decider.go l.13, l.48-50), beta (runner.go l.621)."""
EXPERIMENTAL_PLUGINS_FLAG = "--allow-experimental-plugins"
"""Lets the picker load alpha plugins (pkg/epp/server/options.go l.124, l.239-240); without it the release refuses
them at start (runner.go l.452 ``ValidatePluginStability``)."""
LEADER_ELECTION_FLAG = "--ha-enable-leader-election"
"""Leader election among the picker's replicas (pkg/epp/server/options.go l.68, l.165-166): a Lease
``epp-<namespace>-<pool>.llm-d.ai`` in the pool's namespace, released on shutdown (pkg/epp/server/
controller_manager.go l.109-115); readiness and the ext-proc health pass only on the leader (cmd/epp/runner/
health.go l.76-100)."""
EPP_HA_REPLICAS = 2
"""The picker's replicas, behind every pool: a leader and a warm standby (the chart's active-passive
mode, config/charts/README.md l.108-113, for ``router.epp.replicas`` > 1)."""


EPP_APP_PROTOCOL = "kubernetes.io/h2c"
"""The ext-proc port's ``appProtocol`` (the chart's, _service.yaml l.34, l.59)."""


METRICS_AUTH_OFF = "--metrics-endpoint-auth=false"
"""The metrics port without authentication. On by default (pkg/epp/server/options.go l.154, l.231), it makes the
port ask for a token that may GET ``/metrics`` (cmd/epp/runner/runner.go l.393-394, controller-runtime's
``WithAuthenticationAndAuthorization``); the chart's Managed Prometheus scrape then needs a token Secret, a
ClusterRole and binding for it and a Role letting gmp-system's collector read the Secret (config/charts/routerlib/
templates/_gke.yaml l.4-108). The chart turns it off with ``monitoring.prometheus.auth.enabled: false``
(_deployment.yaml l.126-127, values.yaml l.136-139): here the port is reached by nothing but the collectors
(the tenancy's scrape policy and the picker's own, which admits its gRPC ports only), and it serves counters, no
secrets."""


def epp_pd_plugins(pool_selector: Mapping[str, str]) -> str:
    """The picker's prefill/decode configuration, for a pool of prefill and decode servers (the disaggregated vLLM
    mode), with every plugin checked in llm-d/llm-d-router@v0.10.0:

    - ``disaggregatedset-rollout-screener`` (pkg/epp/framework/plugins/requestcontrol/screener/disaggregatedsetrollout
      plugin.go l.43; README.md l.249-311): before every profile it keeps one DisaggregatedSet revision's pods, so a
      rollout never pairs an old prefill with a new decode server (decode pulls with its own KV layout, which an
      engine or ``max_model_len`` change alters). ``revisionGating.mode: sum`` weights each revision by its Ready
      pods of both roles and drops a revision missing either role (config.go l.131-142, l.220-239); the revision and
      role labels are its defaults, ``disaggregatedset.x-k8s.io/revision`` and ``.../role`` (config.go l.50-51), which
      the LWS v0.10.0 controller puts on every pod of a revision (pkg/utils/disaggregatedset/utils.go l.103-111).
      ``scope.labelSelector`` is the pool's own selector (the leaders, which serve). It watches pods through the
      picker's own namespaced pod cache (plugin.go l.123-140; pkg/epp/server/controller_manager.go l.65-76), which
      the picker's Role already grants. It is **alpha** (cmd/epp/runner/runner.go l.569 ``StabilityAlpha``), loaded
      only with ``--allow-experimental-plugins`` (pkg/epp/server/options.go l.239-240; runner.go l.452). Until the
      first pod snapshot after a picker start it answers 503 (README.md l.341-345).
    - ``always-disagg-pd-decider`` (pkg/epp/framework/plugins/scheduling/profilehandler/disagg/
      always_disagg_pd_decider.go l.13, l.48-50: every request disaggregated; beta, runner.go l.621) in place of
      deploy/config/pd-epp-config.yaml's ``prefix-based-pd-decider``, and no prefix-cache producer or scorer: both
      roles run without prefix caching (:data:`~tpu_serving.backends.vllm.kv.PD_FLAGS`), so a prefix the picker
      believes cached on a decode pod is not, and a decision to decode a long prompt locally would compute it on
      decode (docs/disaggregation.md l.397-408).
    - ``disagg-profile-handler`` with ``deciders.prefill`` (disagg_profile_handler.go l.32, l.79-89, l.159-173), runs
      the ``decode`` profile first, then the prefill profile, and sets ``x-prefiller-host-port`` to the prefill pod
      chosen (docs/disaggregation.md l.48-57, l.96-115; pkg/common/routing/common.go l.14), which the decode pod's
      sidecar sends the prefill leg to. The profiles' filters read the pods' ``llm-d.ai/role`` label
      (pkg/epp/framework/plugins/filter/bylabel/roles.go l.11, l.33-60); each picks by queue (queue-scorer).
    - the metrics source and extractor of :data:`EPP_PLUGINS` (the chart adds them to any configuration)."""
    scope = ",".join(f"{k}={v}" for k, v in sorted(pool_selector.items()))
    profiles = "".join(
        f"""- name: {role}
  plugins:
  - pluginRef: {role}-filter
  - pluginRef: max-score-picker
  - pluginRef: queue-scorer
    weight: 1
"""
        for role in ("prefill", "decode")
    )
    return (
        f"""apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: {ROLLOUT_SCREENER}
  parameters:
    scope:
      labelSelector: "{scope}"
    revisionGating:
      mode: sum
      requireRoles:
        values: [prefill, decode]
- type: queue-scorer
- type: prefill-filter
- type: decode-filter
- type: max-score-picker
- type: {PD_DECIDER}
- type: disagg-profile-handler
  parameters:
    deciders:
      prefill: {PD_DECIDER}
"""
        + EPP_METRICS_PLUGINS
        + "schedulingProfiles:\n"
        + profiles
    )


def epp_config(args: ServingGatewayArgs) -> dict[str, str]:
    """The data of the picker's ConfigMap: its plugin configuration, for a prefill/decode pool
    (:func:`epp_pd_plugins`) or the chart's default (:data:`EPP_PLUGINS`)."""
    return {EPP_CONFIG_FILE: epp_pd_plugins(args.pool_selector) if args.disaggregated else EPP_PLUGINS}


EPP_CONFIG_CHECKSUM = "tpu-serving.dev/config-checksum"
"""Pod template annotation holding the sha256 of :func:`epp_config`. The ConfigMap keeps a fixed name and the
picker reads its configuration only at start, so without it a configuration change would reach the pods only at
their next restart; a changed checksum changes the template and rolls the Deployment (Helm's documented
``checksum/config`` pattern, https://helm.sh/docs/howto/charts_tips_and_tricks/#automatically-roll-deployments)."""


def epp_config_checksum(args: ServingGatewayArgs) -> str:
    """The sha256 of :func:`epp_config`'s data, keys sorted (pure: from the builder's data, not in an apply)."""
    return hashlib.sha256(json.dumps(epp_config(args), sort_keys=True).encode()).hexdigest()


def epp_labels(args: ServingGatewayArgs) -> dict[str, str]:
    return {"app": args.epp}


def epp_role(args: ServingGatewayArgs) -> k8s.rbac.v1.RoleInitArgs:
    """What the EPP reads, in its namespace: the objectives and model rewrites (in either group it may find them
    in), its InferencePool and the pods (llm-d/llm-d-router@v0.10.0 config/charts/llm-d-router-gateway/templates/
    rbac.yaml l.8-17 and config/charts/routerlib/templates/_rbac.yaml l.49-52, one Role here; the manager caches
    exactly these kinds, pkg/epp/server/controller_manager.go l.65-101). The stack creates no objective or rewrite
    and installs neither group's CRDs (llm-d-router ships the ``llm-d.ai`` ones, config/crd/bases): the picker
    skips a kind the cluster does not serve (controller_manager.go l.84-93). The chart's ClusterRole for
    TokenReviews and SubjectAccessReviews comes only with its Prometheus monitoring's authentication (_rbac.yaml
    l.2-40), which the stack turns off (:data:`METRICS_AUTH_OFF`): none is needed."""
    read = ["get", "watch", "list"]
    return k8s.rbac.v1.RoleInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.epp, namespace=args.namespace, labels=dict(args.labels)),
        rules=[
            *(
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=[group], resources=["inferenceobjectives", "inferencemodelrewrites"], verbs=read
                )
                for group in EPP_OBJECTIVE_GROUPS
            ),
            k8s.rbac.v1.PolicyRuleArgs(api_groups=[EPP_POOL_GROUP], resources=["inferencepools"], verbs=read),
            k8s.rbac.v1.PolicyRuleArgs(api_groups=[""], resources=["pods"], verbs=read),
            *leader_election_rules(),
        ],
    )


def leader_election_rules() -> list[k8s.rbac.v1.PolicyRuleArgs]:
    """What leader election needs in the pool's namespace: its Lease and the events it records, as the chart's
    Role grants them for more than one replica (llm-d/llm-d-router@v0.10.0 config/charts/routerlib/templates/
    _leader-election-rbac.yaml l.2-17)."""
    return [
        k8s.rbac.v1.PolicyRuleArgs(
            api_groups=["coordination.k8s.io"],
            resources=["leases"],
            verbs=["get", "list", "watch", "create", "update", "patch", "delete"],
        ),
        k8s.rbac.v1.PolicyRuleArgs(api_groups=[""], resources=["events"], verbs=["create", "patch"]),
    ]


def epp_pods(settings: GatewaySettings) -> PodSet:
    """The endpoint picker's pods in the serving namespace, for the quota (:mod:`tpu_serving.common.quota`): a leader and a
    standby, rolled one new pod first (:func:`epp_strategy`: maxSurge 1)."""
    container = ContainerRequests("epp", settings.epp_cpu, settings.epp_memory)
    return PodSet(
        "Deployment of the endpoint picker",
        (PodShape("epp", 1, (container,)),),
        EPP_HA_REPLICAS,
        surge=1,
    )


def epp_deployment(args: ServingGatewayArgs) -> k8s.apps.v1.DeploymentInitArgs:
    """The endpoint picker, a grace period of 130 s, ``NAMESPACE`` and ``POD_NAME``
    from the downward API and the plugin configuration mounted at /config (llm-d/llm-d-router@v0.10.0
    config/charts/routerlib/templates/_deployment.yaml l.14, l.166-174, l.203-205, l.280-282, l.337-345;
    values.yaml l.7 ``replicas: 1``). Its arguments are the chart's for an InferencePool (l.96-128) with no
    tracing (``tracing.enabled: false``, values.yaml l.145-146), ``--metrics-endpoint-auth=false``
    (:data:`METRICS_AUTH_OFF`), for the stack's PodMonitoring of the metrics port, and behind a prefill/decode pool
    ``--allow-experimental-plugins`` for the alpha rollout screener (:func:`epp_pd_plugins`).

    Two replicas (:data:`EPP_HA_REPLICAS`) with ``--ha-enable-leader-election``, as the chart runs more than one
    (l.110-112), not the chart's default of one: a lone picker's node lost to a repair, an upgrade or a scale-down
    leaves the pool unpicked (``FailOpen``) or refusing every request (``FailClose``) until it is rescheduled, 300 s
    of the default ``NoExecute`` toleration and more; probes on the ``liveness`` service, RollingUpdate
    (:func:`epp_strategy`), the replicas apart, a disruption budget (:func:`epp_disruption_budget`). GKE's load balancer checks the picker on
    gRPC 9003 (the chart adds no HealthCheckPolicy for that port even with several replicas and leader election,
    config/charts/llm-d-router-gateway/templates/gke.yaml l.38-41), and an overall check, with no service name,
    passes only on the leader (cmd/epp/runner/health.go l.85-89): the load balancer sends ext-proc calls to the
    leader alone."""
    field_env = [
        k8s.core.v1.EnvVarArgs(
            name=n,
            value_from=k8s.core.v1.EnvVarSourceArgs(field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path=p)),
        )
        for n, p in (("NAMESPACE", "metadata.namespace"), ("POD_NAME", "metadata.name"))
    ]
    health = k8s.core.v1.GRPCActionArgs(port=EPP_HEALTH_PORT, service=EPP_LIVENESS_SERVICE)
    container = k8s.core.v1.ContainerArgs(
        name="epp",
        image=args.settings.epp_image,
        args=[
            "--pool-name",
            args.name,
            "--pool-namespace",
            args.namespace,
            "--pool-group",
            EPP_POOL_GROUP,
            "--zap-encoder",
            "json",
            "--config-file",
            f"/config/{EPP_CONFIG_FILE}",
            "--grpc-health-port",
            str(EPP_HEALTH_PORT),
            "--tracing=false",
            METRICS_AUTH_OFF,
            LEADER_ELECTION_FLAG,
            *((EXPERIMENTAL_PLUGINS_FLAG,) if args.disaggregated else ()),
        ],
        ports=[
            k8s.core.v1.ContainerPortArgs(name="grpc", container_port=EPP_GRPC_PORT),
            k8s.core.v1.ContainerPortArgs(name="grpc-health", container_port=EPP_HEALTH_PORT),
            k8s.core.v1.ContainerPortArgs(name="metrics", container_port=EPP_METRICS_PORT),
        ],
        liveness_probe=k8s.core.v1.ProbeArgs(grpc=health, initial_delay_seconds=5, period_seconds=10),
        readiness_probe=k8s.core.v1.ProbeArgs(grpc=health, period_seconds=2),
        env=field_env,
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name="plugins-config", mount_path="/config")],
        resources=requests(args.settings.epp_cpu, args.settings.epp_memory, memory_limit=True),
        # The image is distroless/static:nonroot running as 65532 (llm-d/llm-d-router@v0.10.0 Dockerfile.epp
        # l.6, l.50): one static binary (/app/epp, l.48, l.59) reading its config from the mounted ConfigMap, so
        # the root filesystem is read-only. It writes no file: the ext-proc server's self-signed certificate
        # (--secure-serving, on by default, options.go l.153) is made in memory (pkg/epp/server/runserver.go
        # l.182, internal/tls/tls.go l.34-73).
        security_context=container_security(run_as_user=EPP_USER, read_only_root=True),
    )
    return k8s.apps.v1.DeploymentInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.epp, namespace=args.namespace, labels=dict(args.labels)),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            replicas=EPP_HA_REPLICAS,
            strategy=epp_strategy(),
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=epp_labels(args)),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    labels={**args.labels, **epp_labels(args)},
                    annotations={EPP_CONFIG_CHECKSUM: epp_config_checksum(args)},
                ),
                spec=k8s.core.v1.PodSpecArgs(
                    service_account_name=args.epp,
                    # The endpoint picker watches the InferencePool and its pods: it needs its token.
                    automount_service_account_token=True,
                    security_context=pod_security(),
                    priority_class_name=args.priority_class_name,
                    termination_grace_period_seconds=130,
                    affinity=_apart(args),
                    # and, preferred, in different zones of the CPU pool: a zone outage leaves one (spread.zone_spread_args)
                    topology_spread_constraints=[zone_spread_args(epp_labels(args))],
                    containers=[container],
                    volumes=[
                        k8s.core.v1.VolumeArgs(
                            name="plugins-config", config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=args.epp)
                        )
                    ],
                ),
            ),
        ),
    )


def epp_strategy() -> k8s.apps.v1.DeploymentStrategyArgs:
    """A leader and a standby: RollingUpdate, one new pod up before an old one goes (maxSurge 1, maxUnavailable 0), so a
    rollout never takes both; an old leader on SIGTERM reports NOT_SERVING and releases its Lease at once, then
    keeps serving ext-proc for ``--drain-timeout`` (30 s default, pkg/epp/server/options.go l.43, l.167-170;
    within the 130 s grace period) while a standby takes the Lease. The chart keeps Recreate with leader
    election because its readiness probe passes only on the leader (l.155-165), and then a rolling update could
    never remove the old leader (l.339-344): here the probes ask the ``liveness`` service, which every running
    replica passes (cmd/epp/runner/health.go l.90-96), and which replica the load balancer sends requests to is
    its own health check's choice (below, :func:`epp_deployment`)."""
    return k8s.apps.v1.DeploymentStrategyArgs(
        type="RollingUpdate",
        rolling_update=k8s.apps.v1.RollingUpdateDeploymentArgs(max_surge=1, max_unavailable=0),
    )


def _apart(args: ServingGatewayArgs) -> k8s.core.v1.AffinityArgs:
    """The replicas on different nodes, required: a node's loss or drain takes one of them, never both (a fail-closed
    pool refuses every request while no replica serves, a fail-open one routes unpicked). The CPU pool keeps at least two nodes for it
    (:func:`tpu_serving.config.checks.cpu_pool_spread_problem`); a surge pod of a rollout waits for a third node, which
    the pool's autoscaler adds."""
    return k8s.core.v1.AffinityArgs(
        pod_anti_affinity=k8s.core.v1.PodAntiAffinityArgs(
            required_during_scheduling_ignored_during_execution=[
                k8s.core.v1.PodAffinityTermArgs(
                    label_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=epp_labels(args)),
                    topology_key="kubernetes.io/hostname",
                )
            ]
        )
    )


def epp_disruption_budget(args: ServingGatewayArgs) -> k8s.policy.v1.PodDisruptionBudgetInitArgs:
    """A drain or upgrade evicts one picker replica at a time (``maxUnavailable: 1``), the next only once the
    replacement runs: the standby takes the Lease meanwhile."""
    return k8s.policy.v1.PodDisruptionBudgetInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.epp, namespace=args.namespace, labels=dict(args.labels)),
        spec=k8s.policy.v1.PodDisruptionBudgetSpecArgs(
            max_unavailable=1,
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=epp_labels(args)),
        ),
    )


def epp_service(args: ServingGatewayArgs) -> k8s.core.v1.ServiceInitArgs:
    """The EPP's ext-proc and metrics ports (llm-d/llm-d-router@v0.10.0 config/charts/routerlib/templates/
    _service.yaml l.45-66).

    The chart also declares ``appProtocol: kubernetes.io/h2c`` (cleartext HTTP/2) on the ext-proc port (l.59,
    since llm-d/llm-d-router#1681), while the picker serves ext-proc over TLS unless ``--secure-serving=false``
    (pkg/epp/server/options.go l.153, l.226), and GKE reads a Service port's ``appProtocol`` as the protocol its
    load balancer speaks to the backend (https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway
    #load-balancer-tls, as quoted in openbao/openbao-helm#151; not read here). How GKE's InferencePool
    controller uses it for the picker is not written in the release's sources, so the port keeps none, as
    before the move to llm-d-router."""
    return k8s.core.v1.ServiceInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.epp, namespace=args.namespace, labels=dict(args.labels)),
        spec=k8s.core.v1.ServiceSpecArgs(
            type="ClusterIP",
            selector=epp_labels(args),
            ports=[
                # h2c: the load balancer speaks HTTP/2 cleartext to the ext-proc gRPC port, as the chart declares it
                # (llm-d/llm-d-router@v0.10.0 config/charts/routerlib/templates/_service.yaml l.34, l.59; GKE review
                # round 40, m2)
                k8s.core.v1.ServicePortArgs(
                    name="grpc-ext-proc", protocol="TCP", port=EPP_GRPC_PORT, app_protocol=EPP_APP_PROTOCOL
                ),
                k8s.core.v1.ServicePortArgs(name="http-metrics", protocol="TCP", port=EPP_METRICS_PORT),
            ],
        ),
    )


def epp_network_policy(args: ServingGatewayArgs) -> k8s.networking.v1.NetworkPolicyInitArgs:
    """The load balancer's proxies call the EPP's ext-proc port from the proxy-only subnet; Google's health
    checkers probe the EPP's backend from :data:`HEALTH_CHECK_RANGES`.

    GKE programs the EPP as a Service Extension backend of the load balancer, health-checked like any
    backend: from 35.191.0.0/16 and 130.211.0.0/22, not from the proxy-only subnet
    (https://cloud.google.com/load-balancing/docs/firewall-rules;
    kubernetes-sigs/gateway-api-inference-extension#2884: a policy admitting only the proxy-only subnet
    leaves the EPP unhealthy, and then every request goes unpicked, or fails under ``failureMode: FailClose``). GKE's Gateway
    controller checks the picker on gRPC port 9003 unless a HealthCheckPolicy on its Service names another
    (llm-d/llm-d-router@v0.10.0 config/charts/llm-d-router-gateway/templates/gke.yaml l.38-41, a comment of
    the chart, not GKE's documentation); that no check reaches the ext-proc port is written nowhere we could
    read, so the checkers may still reach both the gRPC health port and the ext-proc port, and nothing else."""
    return k8s.networking.v1.NetworkPolicyInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=f"{args.epp}-from-gateway", namespace=args.namespace, labels=dict(args.labels)
        ),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=epp_labels(args)),
            policy_types=["Ingress"],
            ingress=[
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[
                        k8s.networking.v1.NetworkPolicyPeerArgs(
                            ip_block=k8s.networking.v1.IPBlockArgs(cidr=args.settings.proxy_only_cidr)
                        )
                    ],
                    ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=EPP_GRPC_PORT)],
                ),
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[
                        k8s.networking.v1.NetworkPolicyPeerArgs(ip_block=k8s.networking.v1.IPBlockArgs(cidr=cidr))
                        for cidr in HEALTH_CHECK_RANGES
                    ],
                    ports=[
                        k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=port)
                        for port in (EPP_GRPC_PORT, EPP_HEALTH_PORT)
                    ],
                ),
            ],
        ),
    )
