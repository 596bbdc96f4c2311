"""Pure builders of vLLM's LeaderWorkerSet and Service, from :class:`~.args.VllmServingArgs`.

One group per slice: every TPU VM of the slice runs one pod holding all of its chips. On a
multi-host slice the leader starts the Ray head and then the OpenAI-compatible server; the
workers join the leader's Ray cluster, and vLLM spreads the model over every chip of the
slice (tensor parallelism times pipeline parallelism = the slice's devices: its chips, or its TensorCores on
TPU7x). A single-host
slice runs the server alone, without Ray.
"""

import shlex
from collections.abc import Mapping, Sequence

import pulumi_kubernetes as k8s

from ...catalog import node_selector
from ...common.naming import NODEPOOL_LABEL
from ...common.podspec import (
    EXEC_PROBE_TIMEOUT_SECONDS,
    container_security,
    http_probes,
    node_lost_tolerations,
    pod_security,
    requests,
    term_trap,
)
from ...common.spread import group_zone_spread, standing_groups
from ...platform import lws
from ...pools import compute_class
from ...pools.nodepool import TPU_RESOURCE
from ...traffic.gateway_settings import SERVER_KEEPALIVE_SECONDS
from .. import groups
from . import file_cache
from .args import VllmServingArgs, WeightsLoader
from .facts import (
    CACHE_MOUNT,
    CACHE_MOUNT_OPTIONS,
    CACHE_VOLUME,
    DSHM_VOLUME,
    GCSFUSE_ANNOTATIONS,
    GCSFUSE_DRIVER,
    HEALTH_PATH,
    HTTP_PORT,
    KEEP_ALIVE_ENV,
    MULTI_HOST_ENV,
    MULTI_NODE_SCRIPTS,
    RAY_GCS_PORT,
    ROLE_LABEL,
    SHUTDOWN_TIMEOUT_FLAG,
    WEIGHTS_MOUNT,
    WEIGHTS_MOUNT_OPTIONS,
    WEIGHTS_VOLUME,
)
from .kv import (
    HOST_IP_ENV,
    KV_TRANSFER_PORT,
    KV_TRANSFER_PORT_ENV,
    PD_FLAGS,
    PULL_TIMEOUT_ENV,
    SIDE_CHANNEL_PORT,
    SIDE_CHANNEL_PORT_ENV,
    kv_transfer_config,
)
from .lifecycle import leader_lifecycle, liveness, readiness, shutdown, worker_lifecycle
from .sidecar import sidecar_container, sidecar_token_volume
from .weights_wait import weights_wait_container

# --------------------------------------------------------------------------- builders


def model_location(args: VllmServingArgs) -> str:
    """What ``vllm serve`` is given as the model: a mount path, a ``gs://`` URI or a repository id."""
    if args.loader == WeightsLoader.GCSFUSE:
        return WEIGHTS_MOUNT
    if args.loader == WeightsLoader.RUNAI_STREAMER:
        return f"gs://{args.weights_bucket}/{args.model}"
    return args.model


def served_names(args: VllmServingArgs) -> list[str]:
    """``--served-model-name``: the name, then its aliases (vLLM's flag takes one or more names, nargs="+",
    vllm-project/vllm#2894), as separate words."""
    if not args.served_model_aliases:
        return [f"--served-model-name={args.served_model_name}"]
    return ["--served-model-name", args.served_model_name, *args.served_model_aliases]


def engine_args(args: VllmServingArgs) -> list[str]:
    """The arguments of ``vllm serve``, after the model."""
    e = args.engine
    tp, pp = e.parallelism(args.shape.devices)
    out = [
        f"--port={server_port(args)}",
        *served_names(args),
        f"--tensor-parallel-size={tp}",
        f"--max-model-len={e.max_model_len}",
        f"--dtype={e.dtype.value}",
        f"--gpu-memory-utilization={e.memory_utilization:g}",
        f"{SHUTDOWN_TIMEOUT_FLAG}={shutdown(args).request_seconds}",
    ]
    if pp > 1:
        out.append(f"--pipeline-parallel-size={pp}")
    if e.quantization is not None:
        out.append(f"--quantization={e.quantization.value}")
    if e.block_size is not None:
        out.append(f"--block-size={e.block_size}")
    if args.loader == WeightsLoader.RUNAI_STREAMER:
        out.append("--load-format=runai_streamer")
    if args.model_revision is not None:
        out.append(f"--revision={args.model_revision}")
    if args.multi_host:
        out.append("--distributed-executor-backend=ray")
    if args.kv_transfer is not None:
        out += [*PD_FLAGS, f"--kv-transfer-config={kv_transfer_config(args.kv_transfer.role)}"]
    return out + list(e.extra_args)


def server_port(args: VllmServingArgs) -> int:
    """The port vLLM listens on: the serving port, but behind the sidecar on a decode server."""
    return args.kv_transfer.server_port if args.kv_transfer is not None else HTTP_PORT


RAY_STOP = "ray stop --force"
"""Stops every Ray process of the host (the worker's raylet, the leader's head) at once."""


def _find_script() -> str:
    first, second = MULTI_NODE_SCRIPTS
    return f"S={first}; [ -f $S ] || S={second}; "


def ray_init_timeout(args: VllmServingArgs) -> int:
    """Seconds the Ray bootstrap waits for the group: the leader for every worker to join, a worker for the head.

    ``multi-node-serving.sh`` gives up after ``ray_init_timeout`` (300 s unless ``--ray_init_timeout=`` says
    otherwise, for ``leader`` and ``worker`` alike: vllm-project/vllm examples/online_serving/
    multi-node-serving.sh), and the leader then exits before ``vllm serve`` starts: the group restarts, and a
    worker still pulling a multi-GB image makes it restart again. The group's pods may take the whole startup
    window (``probes.max_startup_seconds``) to come up, so the bootstrap waits as long."""
    return int(args.probes.max_startup_seconds)


def leader_script(args: VllmServingArgs) -> str:
    """The leader's shell: the Ray head of the group (multi-host), then the server in the foreground."""
    serve = shlex.join(["vllm", "serve", model_location(args), *engine_args(args)])
    if not args.multi_host:
        return f"exec {serve}"
    # $(LWS_GROUP_SIZE) is expanded by the kubelet (LWS sets it on every pod of the group).
    # the shell is PID 1 until the head is up: SIGTERM stops the head and ends the wait (:func:`term_trap`)
    return (
        f"{_find_script()}{term_trap(RAY_STOP)}bash $S leader --ray_cluster_size=$(LWS_GROUP_SIZE) "
        f"--ray_init_timeout={ray_init_timeout(args)} & wait $! && exec {serve}"
    )


def worker_script(args: VllmServingArgs) -> str:
    """A worker joins the leader's Ray cluster and blocks (retrying for the group's startup window). Its shell stays
    PID 1 with a SIGTERM handler that stops the host's Ray node and exits (:func:`term_trap`): an ``exec``'d bash,
    running ``multi-node-serving.sh``, ignored SIGTERM, lived out the grace period and kept dialling
    ``$(LWS_LEADER_ADDRESS)``, which names the group's next leader once it is recreated (GKE review 71, M1)."""
    return (
        f"{_find_script()}{term_trap(RAY_STOP)}bash $S worker --ray_address=$(LWS_LEADER_ADDRESS) "
        f"--ray_init_timeout={ray_init_timeout(args)} & wait $!"
    )


def environment(args: VllmServingArgs) -> list[k8s.core.v1.EnvVarArgs]:
    """Environment of every pod: Ray health checks, the HTTP keep-alive (:data:`~.facts.KEEP_ALIVE_ENV`), the
    compilation cache, Hub access."""
    out = [k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in (MULTI_HOST_ENV if args.multi_host else {}).items()]
    out.append(k8s.core.v1.EnvVarArgs(name=KEEP_ALIVE_ENV, value=str(SERVER_KEEPALIVE_SECONDS)))
    if args.cache_bucket:
        out += cache_environment()
    if args.loader != WeightsLoader.HUGGING_FACE:
        # Nothing comes from the Hub at runtime: huggingface_hub refuses every download.
        out.append(k8s.core.v1.EnvVarArgs(name="HF_HUB_OFFLINE", value="1"))
    if args.kv_transfer is not None:
        out += kv_environment(args.kv_transfer.pull_timeout_seconds)
    if args.hf_token_secret is not None:
        out.append(
            k8s.core.v1.EnvVarArgs(
                name="HF_TOKEN",
                value_from=k8s.core.v1.EnvVarSourceArgs(
                    secret_key_ref=k8s.core.v1.SecretKeySelectorArgs(
                        name=args.hf_token_secret.name, key=args.hf_token_secret.key
                    )
                ),
            )
        )
    return out


def kv_environment(pull_timeout_seconds: int) -> list[k8s.core.v1.EnvVarArgs]:
    """The TPU KV connector's ports and address, on every pod of both roles: Ray hands neither the ports nor
    ``VLLM_HOST_IP`` to its workers, which read the environment of their own pod's ``ray start``
    (docs/design/disaggregated-vllm.md section 1.4: V29 vllm/ray/ray_env.py l.36-48, vllm/v1/executor/ray_utils.py
    l.33-41; tpu-inference examples/disagg/run_disagg_multi_host.sh l.221-234, l.294-307 sets them on every
    process that runs ``ray start``), and the KV pull timeout, which both roles read (:data:`~.kv.PULL_TIMEOUT_ENV`).
    ``TPU_MULTIHOST_BACKEND=ray`` comes with the multi-host environment."""
    pod_ip = k8s.core.v1.EnvVarSourceArgs(field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path="status.podIP"))
    return [
        k8s.core.v1.EnvVarArgs(name=KV_TRANSFER_PORT_ENV, value=str(KV_TRANSFER_PORT)),
        k8s.core.v1.EnvVarArgs(name=SIDE_CHANNEL_PORT_ENV, value=str(SIDE_CHANNEL_PORT)),
        k8s.core.v1.EnvVarArgs(name=HOST_IP_ENV, value_from=pod_ip),
        k8s.core.v1.EnvVarArgs(name=PULL_TIMEOUT_ENV, value=str(pull_timeout_seconds)),
    ]


def kv_ports(args: VllmServingArgs) -> list[k8s.core.v1.ContainerPortArgs]:
    """The connector's transfer and side-channel ports, declared on every pod of both roles (llm-d's TPU guides name
    them ``tpu-kv-transfer`` and ``tpu-pd-coord``: guides/pd-disaggregation/modelserver/tpu/base/vllm/
    patch-prefill.yaml @663f3f2). The bulk transfer's ephemeral ports (:data:`~.kv.BULK_PORTS`) cannot be declared."""
    if args.kv_transfer is None:
        return []
    return [
        k8s.core.v1.ContainerPortArgs(name="tpu-kv-transfer", container_port=KV_TRANSFER_PORT),
        k8s.core.v1.ContainerPortArgs(name="tpu-pd-coord", container_port=SIDE_CHANNEL_PORT),
    ]


def cache_environment() -> list[k8s.core.v1.EnvVarArgs]:
    """The persistent XLA compilation cache: one folder per group and host, ``<group index>/<worker index>`` under
    the engine's cache folder (a disaggregated role's is ``<name>/<role>``, :func:`.disagg_backend.arguments`), for
    every LeaderWorkerSet, a DisaggregatedSet role's included.

    tpu-inference points JAX's persistent cache at ``VLLM_XLA_CACHE_PATH``
    (vllm-project/tpu-inference@v0.27.0 tpu_inference/runner/compilation_manager.py, unchanged in the
    tpu-inference 0.29.0 wheel the pinned image requires:
    ``jax.config.update("jax_compilation_cache_dir", VLLM_XLA_CACHE_PATH)``). Concurrent writers
    to one cache folder fail ("concurrent writes to the VLLM_XLA_CACHE_PATH will cause the error:
    RuntimeError: filesystem error: cannot create directories", GKE serve-vllm-tpu), and whether
    the hosts of a Ray group form one JAX process group whose rank 0 alone writes (JAX
    docs/persistent_compilation_cache.md) is not documented for tpu-inference. So each pod
    writes only its own folder: the same host of the same group finds its programs again after a restart, a
    group recreation, and on a new node (a scale from zero, a node repair or an upgrade gives the VM a new name,
    so a folder keyed by the node's name started every one of them cold). The keys are the LWS pod labels
    ``leaderworkerset.sigs.k8s.io/group-index`` and ``worker-index``, which the LWS pod webhook also injects as
    ``LWS_WORKER_INDEX`` into every container (kubernetes-sigs/lws v0.9.0 and v0.10.0
    api/leaderworkerset/v1/leaderworkerset_types.go l.41, l.45, l.75; v0.9.0 pkg/utils/pod/pod_utils.go l.131-180
    ``AddLWSVariables``). In a DisaggregatedSet's surge rollout the new revision's group 0 runs beside the old
    revision's group 0 of the same role and shares its folder; the old group compiled at its start and writes
    nothing more unless it restarts in that window. JAX keys each entry by the program, its compile options and
    the JAX and XLA versions, so a folder may hold several revisions' programs.
    """
    group = k8s.core.v1.EnvVarArgs(
        name="LWS_GROUP_INDEX",
        value_from=k8s.core.v1.EnvVarSourceArgs(
            field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path=f"metadata.labels['{lws.GROUP_INDEX_LABEL}']")
        ),
    )
    # $(VAR) refers to variables defined before it in the list (LWS_WORKER_INDEX is injected by
    # the LWS pod webhook into every container, ahead of the template's own).
    path = f"{CACHE_MOUNT}/$(LWS_GROUP_INDEX)/$(LWS_WORKER_INDEX)"
    return [group, k8s.core.v1.EnvVarArgs(name="VLLM_XLA_CACHE_PATH", value=path)]


def volumes(args: VllmServingArgs) -> tuple[list[k8s.core.v1.VolumeArgs], list[k8s.core.v1.VolumeMountArgs]]:
    """``/dev/shm``, the weights (``gcsfuse``) and the compilation cache, with their mounts."""
    vols = [
        k8s.core.v1.VolumeArgs(
            name=DSHM_VOLUME,
            empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(medium="Memory", size_limit=args.requests.shm_size),
        )
    ]
    mounts = [k8s.core.v1.VolumeMountArgs(name=DSHM_VOLUME, mount_path="/dev/shm")]
    if args.loader == WeightsLoader.GCSFUSE:
        gib = args.memory_cache_gib
        sized = [
            file_cache.max_size_option(gib) if o.startswith(file_cache.MAX_SIZE) else o for o in WEIGHTS_MOUNT_OPTIONS
        ]
        options = (*sized, f"only-dir={args.model}")
        vols.append(_gcsfuse_volume(WEIGHTS_VOLUME, str(args.weights_bucket), options, read_only=True))
        mounts.append(k8s.core.v1.VolumeMountArgs(name=WEIGHTS_VOLUME, mount_path=WEIGHTS_MOUNT, read_only=True))
        if gib is not None:  # the sidecar's file cache in memory (file_cache), not on the boot disk
            memory = k8s.core.v1.EmptyDirVolumeSourceArgs(medium="Memory", size_limit=f"{gib}Gi")
            vols.append(k8s.core.v1.VolumeArgs(name=file_cache.CACHE_VOLUME, empty_dir=memory))
    if args.cache_bucket:
        options = (*CACHE_MOUNT_OPTIONS, f"only-dir={args.cache_path}")
        vols.append(_gcsfuse_volume(CACHE_VOLUME, args.cache_bucket, options, read_only=False))
        mounts.append(k8s.core.v1.VolumeMountArgs(name=CACHE_VOLUME, mount_path=CACHE_MOUNT))
    return vols, mounts


def _gcsfuse_volume(name: str, bucket: str, options: Sequence[str], *, read_only: bool) -> k8s.core.v1.VolumeArgs:
    attributes = {"bucketName": bucket, "mountOptions": ",".join(options)}
    if read_only:
        # Lists the bucket's objects at mount time, so the first reads need no metadata round trips.
        attributes["gcsfuseMetadataPrefetchOnMount"] = "true"
    return k8s.core.v1.VolumeArgs(
        name=name,
        csi=k8s.core.v1.CSIVolumeSourceArgs(driver=GCSFUSE_DRIVER, read_only=read_only, volume_attributes=attributes),
    )


def gcsfuse_annotations(args: VllmServingArgs) -> dict[str, str]:
    """The FUSE sidecar's annotations; with the file cache in memory, its memory request is the cache's size
    (:mod:`.file_cache`)."""
    gib = args.memory_cache_gib
    return {**GCSFUSE_ANNOTATIONS, **({file_cache.MEMORY_REQUEST: f"{gib}Gi"} if gib is not None else {})}


def uses_gcsfuse(args: VllmServingArgs) -> bool:
    return args.loader == WeightsLoader.GCSFUSE or bool(args.cache_bucket)


def leader_container(args: VllmServingArgs, mounts: list[k8s.core.v1.VolumeMountArgs]) -> k8s.core.v1.ContainerArgs:
    """The server (and, multi-host, the Ray head): probes on ``/health``, TPU chips of its VM."""
    p, r = args.probes, args.requests
    startup, ready, live = http_probes(HEALTH_PATH, server_port(args), p)
    serving = "vllm" if server_port(args) != HTTP_PORT else "http"
    return k8s.core.v1.ContainerArgs(
        name="vllm-leader",
        image=args.images.engine,
        command=["/bin/sh", "-c"],
        args=[leader_script(args)],
        env=environment(args),
        ports=[k8s.core.v1.ContainerPortArgs(name=serving, container_port=server_port(args))]
        + ([k8s.core.v1.ContainerPortArgs(name="ray-gcs", container_port=RAY_GCS_PORT)] if args.multi_host else [])
        + kv_ports(args),
        resources=requests(r.leader_cpu, r.leader_memory, {TPU_RESOURCE: str(args.shape.chips_per_vm)}),
        startup_probe=startup,
        readiness_probe=readiness(args, ready, server_port(args)),
        liveness_probe=liveness(args, live, server_port(args)),
        lifecycle=leader_lifecycle(args),
        volume_mounts=mounts,
        security_context=container_security(),
    )


def worker_container(args: VllmServingArgs, mounts: list[k8s.core.v1.VolumeMountArgs]) -> k8s.core.v1.ContainerArgs:
    """A Ray worker on one TPU VM, holding all of its chips."""
    r = args.requests
    return k8s.core.v1.ContainerArgs(
        name="vllm-worker",
        image=args.images.engine,
        command=["/bin/sh", "-c"],
        args=[worker_script(args)],
        env=environment(args),
        ports=kv_ports(args) or None,
        resources=requests(r.worker_cpu, r.worker_memory, {TPU_RESOURCE: str(args.shape.chips_per_vm)}),
        readiness_probe=k8s.core.v1.ProbeArgs(
            # Ready once the group's Ray head answers: `ray health-check` exits 0 when the GCS at
            # --address is healthy (Ray CLI, ray/scripts/scripts.py `health_check`).
            exec_=k8s.core.v1.ExecActionArgs(
                command=["/bin/sh", "-c", f"ray health-check --address=${{LWS_LEADER_ADDRESS}}:{RAY_GCS_PORT}"]
            ),
            period_seconds=args.probes.readiness_period_seconds,
            failure_threshold=args.probes.readiness_failure_threshold,
            # An exec probe gets 1 s unless told otherwise (Kubernetes Probe.timeoutSeconds, "Defaults to 1
            # second"); `ray health-check` starts a Python interpreter and took 0.5-1.0 s against an idle head
            # (Ray 2.60.0, measured in review). A worker that times out leaves its whole group not ready
            # (lws v0.10.0 leaderworkerset_controller.go l.627-641), which stalls a rolling update.
            timeout_seconds=EXEC_PROBE_TIMEOUT_SECONDS,
        ),
        lifecycle=worker_lifecycle(args),
        volume_mounts=mounts,
        security_context=container_security(),
    )


def group_node_selector(args: VllmServingArgs) -> dict[str, str]:
    """The nodes a group's pods take: a slice of the shape, and with a ComputeClass (``compute_class``) a node of that
    class, the serving's own pools or a fallback slice GKE made for it (which GKE labels with the class). The shape
    labels stay: every priority of the class is that shape, and GKE labels a TPU node with its accelerator and
    topology whichever pool made it."""
    selector = node_selector(args.shape)
    if args.compute_class is not None:
        selector.update(compute_class.node_labels(args.compute_class))
    return selector


def pool_affinity(pools: Sequence[str]) -> k8s.core.v1.AffinityArgs | None:
    """Required node affinity to the node pools ``pools`` (GKE labels each node with its pool,
    ``cloud.google.com/gke-nodepool``); None for any pool. The cluster autoscaler scales up only a pool whose
    nodes would match the pending pod, so a role's groups start its own pools from zero, never the other's."""
    if not pools:
        return None
    term = k8s.core.v1.NodeSelectorTermArgs(
        match_expressions=[
            k8s.core.v1.NodeSelectorRequirementArgs(key=NODEPOOL_LABEL, operator="In", values=list(pools))
        ]
    )
    return k8s.core.v1.AffinityArgs(
        node_affinity=k8s.core.v1.NodeAffinityArgs(
            required_during_scheduling_ignored_during_execution=k8s.core.v1.NodeSelectorArgs(node_selector_terms=[term])
        )
    )


def leader_labels(args: VllmServingArgs) -> dict[str, str]:
    """Labels that pick the leaders out: the LWS name label and ``role: leader`` (as upstream)."""
    return {lws.NAME_LABEL: args.name, ROLE_LABEL: "leader"}


def leader_worker_set_spec(args: VllmServingArgs) -> dict[str, object]:
    """``spec`` of the LeaderWorkerSet (LWS v0.10.0)."""
    vols, mounts = volumes(args)
    annotations = {**lws.NOT_SAFE_TO_EVICT, **(gcsfuse_annotations(args) if uses_gcsfuse(args) else {})}

    def pod(
        container: k8s.core.v1.ContainerArgs,
        labels: Mapping[str, str],
        sidecar: k8s.core.v1.ContainerArgs | None,
        spread: list[k8s.core.v1.TopologySpreadConstraintArgs] | None = None,
        wait: k8s.core.v1.ContainerArgs | None = None,
    ) -> k8s.core.v1.PodTemplateSpecArgs:
        inits = [c for c in (sidecar, wait) if c is not None]
        return k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(labels=dict(labels) or None, annotations=annotations),
            spec=k8s.core.v1.PodSpecArgs(
                init_containers=inits or None,
                containers=[container],
                service_account_name=args.service_account,
                priority_class_name=args.priority_class_name,
                node_selector=group_node_selector(args),
                affinity=pool_affinity(args.node_pools),
                topology_spread_constraints=spread,
                tolerations=[
                    k8s.core.v1.TolerationArgs(key=TPU_RESOURCE, operator="Exists", effect="NoSchedule"),
                    *(compute_class.tolerations(args.compute_class) if args.compute_class is not None else []),
                    *node_lost_tolerations(args.probes),
                ],
                volumes=[*vols, sidecar_token_volume()] if sidecar is not None else vols,
                security_context=pod_security(),
                termination_grace_period_seconds=shutdown(args).grace_seconds,
                # Neither vLLM nor Ray calls the Kubernetes API. The GCS FUSE driver gets its token through
                # the CSI token request (its CSIDriver's tokenRequests, GoogleCloudPlatform/gcs-fuse-csi-driver
                # deploy/base/setup/csi_driver.yaml), not through the pod's mounted one.
                automount_service_account_token=False,
            ),
        )

    # the standing groups apart over the zones, required, on the leaders (a multi-host group's workers follow theirs
    # onto its slice); groups above them to the emptier zone, preferred
    spread = (
        group_zone_spread(
            leader_labels(args),
            args.zones,
            (lws.GROUP_INDEX_LABEL, standing_groups(args.replicas, args.zones)),
            args.zone_spread,
        )
        if args.zones > 1 and args.kv_transfer is None
        else None
    )
    leader = pod(
        leader_container(args, mounts),
        {**args.labels, ROLE_LABEL: "leader"},
        sidecar_container(args),
        spread,
        weights_wait_container(args),
    )
    template: dict[str, object] = {"size": args.group_size, "restartPolicy": lws.restart_policy(args.lws_version)}
    if args.multi_host:
        template["leaderTemplate"] = leader
        template["workerTemplate"] = pod(
            worker_container(args, mounts), args.labels, None, None, weights_wait_container(args)
        )
    else:
        template["workerTemplate"] = leader  # a group of one: the leader is built from the worker template
    replicas: dict[str, object] = {} if args.autoscaled else {"replicas": args.replicas}
    return {
        **replicas,
        "rolloutStrategy": lws.rollout_strategy(args.rollout, lws.canary_partition(args.replicas, args.canary_groups)),
        "leaderWorkerTemplate": template,
    }


def service_args(args: VllmServingArgs) -> k8s.core.v1.ServiceInitArgs:
    """ClusterIP Service on the leaders' serving port."""
    return leader_service(args.service_name, args.namespace, args.labels, leader_labels(args))


def leader_service(
    name: str, namespace: str, labels: Mapping[str, str], leaders: Mapping[str, str]
) -> k8s.core.v1.ServiceInitArgs:
    """ClusterIP Service ``name`` on the serving port of the pods labelled ``leaders``
    (:func:`~tpu_serving.backends.groups.leader_service`)."""
    return groups.leader_service(name, namespace, labels, leaders, ("http", HTTP_PORT))
