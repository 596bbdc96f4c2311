"""Pure builders of the JetStream + Pathways LeaderWorkerSet and Service.

The leader pod holds the Pathways resource manager (``pathways-rm``), the IFRT proxy
(``pathways-proxy``), the JetStream/MaxText server (``jax-tpu``) and its HTTP front end
(``jetstream-http``); each worker pod is a Pathways server on one TPU VM. Interleaved
serving spreads one model over one or more slices; disaggregated serving runs prefill and
decode on two slices (``ExperimentalMaxtextDisaggregatedServer_8``).

Everything that depends on the slices (group size, ``--instance_type``, node selectors,
``google.com/tpu`` per worker, subgroups) is derived from the catalog shape, never typed in.
"""

from dataclasses import fields

import pulumi_kubernetes as k8s

from ...catalog import SliceShape, node_selector
from ...common.naming import NODEPOOL_LABEL
from ...common.podspec import (
    container_security,
    http_probes,
    node_lost_tolerations,
    pod_security,
    requests,
    tcp_probe,
    tcp_probes,
)
from ...platform import lws
from ...pools.nodepool import TPU_RESOURCE
from ..groups import leader_service
from .args import MaxTextSettings, Mode, PathwaysServingArgs, disaggregated_server
from .facts import HEALTH_PATH, HTTP_PORT, JAX_PORT, PROXY_PORT, RM_PORT, WORKER_PORT

PULL_POLICY = "IfNotPresent"
"""Every container's ``imagePullPolicy`` (SRE review M3, GKE review m4): the image is pulled only when the node does
not hold it yet, which is also what Kubernetes gives a tagged, non-``latest`` image when the field is left out
(kubernetes.io/docs/concepts/containers/images/, "Image pull policy" and "Default image pull policy"; k8s.io/api
v0.34 core/v1/types.go ``Container.ImagePullPolicy``: "Defaults to Always if :latest tag is specified, or
IfNotPresent otherwise"). The seeds' ``Always`` made every group recreation (any container restart, under
``RecreateGroupAfterStart``) depend on the registry answering, and let a tag moved upstream change the engine on the
next recreation without a ``pulumi up``. With ``IfNotPresent`` a re-tag upstream does not reach a node that holds the
image: pin a digest (``image@sha256:...``) to change it, which the preview's tag-only line names."""


def maxtext_args(settings: MaxTextSettings, checkpoint_uri: str, mode: Mode, shape: SliceShape) -> list[str]:
    """The ``jax-tpu`` arguments: the config file, then ``key=value`` settings, then the disaggregated server
    for ``shape`` (validated first: :func:`disaggregation_problem`)."""

    def text(v: object) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    args = [settings.config_file, f"model_name={settings.model_name}", f"load_parameters_path={checkpoint_uri}"]
    for f in fields(settings):
        if f.name in {"config_file", "model_name", "extra_args"}:
            continue
        value = getattr(settings, f.name)
        if value is not None:
            args.append(f"{f.name}={text(value)}")
    server = disaggregated_server(shape)
    if mode == "disaggregated" and server is not None:
        args.append(f"inference_server={server}")
    return args + list(settings.extra_args)


def pre_stop(args: PathwaysServingArgs) -> k8s.core.v1.LifecycleArgs:
    """The preStop of every container of the group, leader and workers: a sleep that keeps the whole group up while
    the endpoint is removed and for the longest request the gateway allows, then SIGTERM. Neither JetStream nor
    MaxText has a drain of its own: JetStream's gRPC server stops with no grace (AI-Hypercomputer/JetStream
    jetstream/core/server_lib.py ``JetStreamServer.stop``: ``self._server.stop(0)``, at 005ce17), no MaxText key of
    the conformance table drains (tools/conformance/tables/maxtext-jetstream-pathways-v0.2.0.json), and the
    jetstream-http image's signal handling is not public; so the group holds every host until the requests in flight are done,
    and a stopping group always takes the whole window (minutes, beside its hours of reload).

    The wait is fixed, on every termination, a crash recreation's included (SRE review m9): JetStream tells its work in
    flight only as Prometheus gauges of ``jax-tpu`` (``jetstream_slots_used_percentage``,
    ``jetstream_prefill_backlog_size``: :class:`~.facts.JetStreamMetric`, served only with ``prometheus_port``), and
    the containers that must outlive its drain (the Pathways resource manager, proxy and workers, jetstream-http) run
    images whose tools are not published, so no hook of theirs can wait on those gauges; the kubelet stops a pod's
    containers in parallel, each after its own hook (Kubernetes v1.36.3 pkg/kubelet/kuberuntime/kuberuntime_container.go
    l.929-946 ``killContainersWithSyncResult``, one goroutine per container), so the pod lasts as its longest."""
    s = args.shutdown
    return s.sleep(s.pre_stop_seconds + s.request_seconds)


def jax_probes(args: PathwaysServingArgs) -> tuple[k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs]:
    """``jax-tpu``'s startup, liveness and readiness probes. The probes that restart it (startup, liveness) reach
    its own gRPC port, never the ``jetstream-http`` container's: LWS recreates the whole group when any container
    of a pod restarts (lws v0.10.0 pkg/utils/pod/pod_utils.go l.28-45 ``ContainerRestarted``: any restartCount
    above 0, init containers included; pkg/controllers/pod_controller.go l.207-264 then deletes the leader, and the
    group with it), so a liveness probe through the HTTP front end turned a hung proxy into a reload of the model.

    They are TCP connects: JetStream's server registers only its Orchestrator service, not ``grpc.health.v1``,
    which a Kubernetes gRPC probe calls (AI-Hypercomputer/JetStream jetstream/core/server_lib.py
    ``JetStreamServer.__init__``, ``add_OrchestratorServicer_to_server`` alone, at v0.2.0 ebb6150 l.56-59 and at
    acd4f5a l.89-105). The port opens only once every engine has loaded its weights (``run``: ``load_params`` for
    each engine, then ``jetstream_server.start()``, v0.2.0 l.110-126), so the startup window still covers the load.
    Readiness stays ``GET /healthcheck`` through ``jetstream-http``, the path the Service sends requests on: it
    fails the pod out of the Service and restarts nothing."""
    startup, _, liveness = tcp_probes(JAX_PORT, args.probes)
    _, readiness, _ = http_probes(HEALTH_PATH, HTTP_PORT, args.probes)
    return startup, liveness, readiness


def _tpu_tolerations(args: PathwaysServingArgs) -> list[k8s.core.v1.TolerationArgs]:
    tpu = k8s.core.v1.TolerationArgs(key=TPU_RESOURCE, operator="Exists", effect="NoSchedule")
    return [tpu, *node_lost_tolerations(args.probes)]


def leader_containers(args: PathwaysServingArgs) -> list[k8s.core.v1.ContainerArgs]:
    """``pathways-proxy``, ``pathways-rm``, ``jax-tpu`` and ``jetstream-http``."""
    img, r = args.images, args.requests
    startup, liveness, readiness = jax_probes(args)
    scratch = f"--gcs_scratch_location={args.scratch_uri}"
    # Hardened (podspec.container_security); jax-tpu gets back only the capabilities the stack adds (the
    # disaggregated seed's SYS_PTRACE, NET_ADMIN and SYS_TIME).
    hardened = container_security()
    stop = pre_stop(args)
    return [
        k8s.core.v1.ContainerArgs(
            name="pathways-proxy",
            image=img.proxy,
            image_pull_policy=PULL_POLICY,
            args=[f"--resource_manager_address={lws.LEADER_ADDRESS}:{RM_PORT}", f"--server_port={PROXY_PORT}", scratch],
            ports=[k8s.core.v1.ContainerPortArgs(container_port=PROXY_PORT)],
            resources=requests(r.proxy_cpu, r.proxy_memory),
            security_context=hardened,
            lifecycle=stop,
            readiness_probe=tcp_probe(PROXY_PORT),
        ),
        k8s.core.v1.ContainerArgs(
            name="pathways-rm",
            image=img.server,
            image_pull_policy=PULL_POLICY,
            env=[
                k8s.core.v1.EnvVarArgs(name="HOST_ADDRESS", value=lws.LEADER_ADDRESS),
                k8s.core.v1.EnvVarArgs(name="TPU_SKIP_MDS_QUERY", value="true"),
            ],
            args=[
                f"--server_port={RM_PORT}",
                scratch,
                "--node_type=resource_manager",
                f"--instance_count={args.num_slices}",
                f"--instance_type={args.shape.instance_type}",
                *args.resource_manager_flags,
            ],
            ports=[k8s.core.v1.ContainerPortArgs(container_port=RM_PORT)],
            resources=requests(r.resource_manager_cpu, r.resource_manager_memory),
            security_context=hardened,
            lifecycle=stop,
            readiness_probe=tcp_probe(RM_PORT),
        ),
        k8s.core.v1.ContainerArgs(
            name="jax-tpu",
            image=img.jetstream,
            image_pull_policy=PULL_POLICY,
            args=maxtext_args(args.maxtext, args.checkpoint_uri, args.mode, args.shape),
            env=[k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in args.jax_env.items()] or None,
            security_context=container_security(add=args.jax_capabilities),
            lifecycle=stop,
            ports=[k8s.core.v1.ContainerPortArgs(container_port=JAX_PORT)]
            + (
                [k8s.core.v1.ContainerPortArgs(name="metrics", container_port=args.maxtext.prometheus_port)]
                if args.maxtext.prometheus_port
                else []
            ),
            resources=requests(r.jax_cpu, r.jax_memory),
            startup_probe=startup,
            readiness_probe=readiness,
            liveness_probe=liveness,
        ),
        # jetstream-http stays in the leader pod: the HTTP front ends published for it dial the orchestrator on
        # loopback alone, with no flag for another address (GoogleCloudPlatform/ai-on-gke
        # tutorials-and-examples/inference-servers/jetstream/http-server/http_server.py at 9befebf, and
        # .../maxtext/http-server/http_server.py: ``grpc.aio.insecure_channel("127.0.0.1:9000", ...)``; the
        # request's ``server``/``port`` fields are unused), and the v0.2.3 image's own source is not public. It has
        # no liveness probe, so a hang takes the leader out of the Service (readiness) without a restart, which
        # would recreate the group (:func:`jax_probes`).
        k8s.core.v1.ContainerArgs(
            name="jetstream-http",
            image=img.http,
            image_pull_policy=PULL_POLICY,
            ports=[k8s.core.v1.ContainerPortArgs(container_port=HTTP_PORT)],
            resources=requests(r.http_cpu, r.http_memory),
            security_context=hardened,
            lifecycle=stop,
            readiness_probe=tcp_probe(HTTP_PORT),
        ),
    ]


def worker_container(args: PathwaysServingArgs) -> k8s.core.v1.ContainerArgs:
    """The Pathways server on one TPU VM, holding all of its chips."""
    chips = str(args.shape.chips_per_vm)
    return k8s.core.v1.ContainerArgs(
        name="worker",
        image=args.images.server,
        image_pull_policy=PULL_POLICY,
        args=[
            f"--server_port={WORKER_PORT}",
            f"--resource_manager_address={lws.LEADER_ADDRESS}:{RM_PORT}",
            f"--gcs_scratch_location={args.scratch_uri}",
        ],
        ports=[k8s.core.v1.ContainerPortArgs(container_port=WORKER_PORT)],
        resources=requests(args.requests.worker_cpu, args.requests.worker_memory, {TPU_RESOURCE: chips}),
        readiness_probe=tcp_probe(WORKER_PORT),
        security_context=container_security(),
        lifecycle=pre_stop(args),
    )


def selector_labels(args: PathwaysServingArgs) -> dict[str, str]:
    """Labels of the leader pods, selected by the Service."""
    return {"app": args.name}


def leader_worker_set_spec(args: PathwaysServingArgs) -> dict[str, object]:
    """``spec`` of the LeaderWorkerSet (LWS v0.4.0 and later)."""
    selector = node_selector(args.shape)
    tolerations = _tpu_tolerations(args)

    def pod(containers: list[k8s.core.v1.ContainerArgs]) -> k8s.core.v1.PodSpecArgs:
        return k8s.core.v1.PodSpecArgs(
            containers=containers,
            service_account_name=args.service_account,
            priority_class_name=args.priority_class_name,
            node_selector=selector,
            tolerations=tolerations,
            security_context=pod_security(),
            termination_grace_period_seconds=args.shutdown.grace_seconds,
            # No container calls the Kubernetes API; Workload Identity needs no mounted token (the GKE
            # metadata server asks for the pod's own), so none is mounted.
            automount_service_account_token=False,
        )

    template: dict[str, object] = {
        "size": args.group_size,
        "restartPolicy": lws.restart_policy(args.lws_version),
        "leaderTemplate": k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(
                labels={**args.labels, **selector_labels(args)}, annotations=dict(lws.NOT_SAFE_TO_EVICT)
            ),
            spec=pod(leader_containers(args)),
        ),
        "workerTemplate": k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(
                labels=dict(args.labels) or None, annotations=dict(lws.NOT_SAFE_TO_EVICT)
            ),
            spec=pod([worker_container(args)]),
        ),
    }
    if args.num_slices > 1:
        # One subgroup per slice; the leader (size - 1 divisible) is the extra pod.
        template["subGroupPolicy"] = {"subGroupSize": args.shape.vms}
    replicas: dict[str, object] = {} if args.autoscaled else {"replicas": args.replicas}
    return {
        **replicas,
        "rolloutStrategy": lws.rollout_strategy(args.rollout, lws.canary_partition(args.replicas, args.canary_groups)),
        "leaderWorkerTemplate": template,
    }


def topology_annotation(args: PathwaysServingArgs) -> dict[str, str]:
    """One node pool per group, or per subgroup when the group spans several slices."""
    key = lws.SUBGROUP_EXCLUSIVE_TOPOLOGY if args.num_slices > 1 else lws.EXCLUSIVE_TOPOLOGY
    return {key: NODEPOOL_LABEL}


def service_args(args: PathwaysServingArgs) -> k8s.core.v1.ServiceInitArgs:
    """ClusterIP Service on the HTTP port of the leader pods."""
    return leader_service(
        args.service_name, args.namespace, args.labels, selector_labels(args), ("jetstream-http", HTTP_PORT)
    )
