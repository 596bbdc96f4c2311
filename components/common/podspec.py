"""Small pod-spec builders shared by the workload components, the hardened security contexts among them."""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi_kubernetes as k8s

from .settings import described

REQUEST_TIMEOUT_SECONDS = 300
"""The longest request the serving gateway lets run by default, in seconds: the default of both
:attr:`GatewaySettings.request_timeout_seconds <tpu_serving.traffic.gateway_settings.GatewaySettings>` and the drain that
follows an endpoint's removal."""


def tcp_probe(port: int, period_seconds: int = 10, failure_threshold: int = 3) -> k8s.core.v1.ProbeArgs:
    """A probe that passes once ``port`` accepts TCP connections."""
    return k8s.core.v1.ProbeArgs(
        tcp_socket=k8s.core.v1.TCPSocketActionArgs(port=port),
        period_seconds=period_seconds,
        failure_threshold=failure_threshold,
    )


def term_trap(action: str = "") -> str:
    """The head of a ``/bin/sh -c`` script that runs as its container's PID 1 and does not ``exec`` its last
    command: a SIGTERM handler that runs ``action`` and exits. The kubelet stops a container by sending SIGTERM to
    its PID 1 alone, and the kernel delivers a signal to a PID namespace's init only if the init installed a
    handler for it ("the only signals that can be sent to the init process are those for which init has
    established a signal handler", pid_namespaces(7)); a shell installs none for SIGTERM, so without this the
    container lives out the pod's whole grace period (GKE review 71, M1). The script must wait for its children with
    ``wait``, which a trapped signal interrupts at once (POSIX ``wait``: "the reception of a signal for which a trap
    has been set shall cause the wait utility to return immediately"); a foreground child holds the trap until it
    ends. The shell's exit ends the namespace, and the kernel kills what it started."""
    then = f"{action}; exit 143" if action else "exit 143"
    return f"trap '{then}' TERM; "


def requests(
    cpu: str, memory: str, extended: Mapping[str, str] | None = None, *, memory_limit: bool = False
) -> k8s.core.v1.ResourceRequirementsArgs:
    """CPU/memory requests; extended resources (``google.com/tpu``) are requested and limited alike.

    ``memory_limit`` limits memory to the request: the CPU pool's pods share their nodes, and one that
    leaks is OOM-killed alone instead of pressing its neighbours out. TPU pods own their VM (one pod per
    host) and take no limit there: the node's allocatable already bounds them, and a limit would only kill
    a weight load that briefly needs more.
    """
    limits = {**({"memory": memory} if memory_limit else {}), **(extended or {})}
    return k8s.core.v1.ResourceRequirementsArgs(
        requests={"cpu": cpu, "memory": memory, **(extended or {})}, limits=limits or None
    )


RUNTIME_DEFAULT_SECCOMP = "RuntimeDefault"
"""The container runtime's default seccomp profile. GKE Standard does not apply it unless asked
(https://cloud.google.com/kubernetes-engine/docs/concepts/seccomp-in-gke: "GKE Standard ... doesn't apply a
seccomp profile by default"; Autopilot does, TPU workloads included)."""


def container_security(
    *, add: Sequence[str] = (), run_as_user: int | None = None, read_only_root: bool = False
) -> k8s.core.v1.SecurityContextArgs:
    """A container's hardened context: no privilege escalation, every capability dropped but ``add``, and,
    with ``run_as_user``, a fixed non-root user.

    TPU chips need no capability: GKE's TPU device plugin hands the container its ``/dev/vfio/*``
    (v5e, v6e) or ``/dev/accel*`` device nodes, so from GKE 1.28 TPU pods run unprivileged
    (https://cloud.google.com/kubernetes-engine/docs/how-to/tpus, "Run your workload on TPU slice
    nodes": privileged mode only before 1.28). The runtime's default capability set, which ``drop: [ALL]``
    removes, never held ``IPC_LOCK`` or ``SYS_ADMIN`` (containerd ``oci/spec.go``
    ``defaultUnixCaps``), so a TPU runtime that ran under the default set needs none of it back; each
    engine's documented additions are passed as ``add``.
    """
    return k8s.core.v1.SecurityContextArgs(
        allow_privilege_escalation=False,
        capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"], add=list(add) or None),
        run_as_non_root=True if run_as_user is not None else None,
        run_as_user=run_as_user,
        run_as_group=run_as_user,
        read_only_root_filesystem=True if read_only_root else None,
    )


def pod_security() -> k8s.core.v1.PodSecurityContextArgs:
    """A pod's hardened context: the runtime's default seccomp profile."""
    return k8s.core.v1.PodSecurityContextArgs(
        seccomp_profile=k8s.core.v1.SeccompProfileArgs(type=RUNTIME_DEFAULT_SECCOMP)
    )


@dataclass(frozen=True)
class ProbeSettings:
    """Health probes of a model server (an HTTP health endpoint on its serving port).

    The startup probe starts at once and keeps trying for ``max_startup_seconds``, so a
    server that loads in 5 minutes is Ready after about 5 minutes, and a slow checkpoint
    load is still tolerated for an hour: readiness never waits on a fixed initial delay.
    """

    max_startup_seconds: int = described(
        "Longest tolerated checkpoint load and warm-up, in seconds. A stack file's window below the least its "
        "groups' start is published to take (the preview's time to serve) is refused.",
        default=3600,
        ge=60,
        le=86400,
    )
    startup_period_seconds: int = described(
        "Seconds between startup checks (the readiness granularity).", default=5, ge=1, le=300
    )
    readiness_period_seconds: int = described("Seconds between readiness checks once started.", default=10, ge=1)
    readiness_failure_threshold: int = described("Failed readiness checks before leaving the Service.", default=3, ge=1)
    liveness_period_seconds: int = described("Seconds between liveness checks once started.", default=60, ge=1)
    liveness_failure_threshold: int = described("Failed liveness checks before a restart.", default=10, ge=1)
    node_lost_seconds: int = described(
        "Seconds a serving pod stays bound to a node that stopped reporting (not-ready or unreachable) before it "
        "is evicted, its group recreated and its leader taken out of the Service (Kubernetes' default: 300).",
        default=60,
        ge=10,
        le=3600,
    )

    @property
    def startup_failure_threshold(self) -> int:
        """Startup checks allowed: enough to cover ``max_startup_seconds``."""
        return math.ceil(self.max_startup_seconds / self.startup_period_seconds)

    @property
    def imposed_seconds_to_ready(self) -> int:
        """Worst-case delay the probes add after the server first answers."""
        return self.startup_period_seconds + self.readiness_period_seconds


NODE_LOST_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
"""The taints the node lifecycle controller puts on a node that stops reporting (k8s.io/api v0.36.3
core/v1/well_known_taints.go l.20-27, ``TaintNodeNotReady``, ``TaintNodeUnreachable``), with effect NoExecute."""


def node_lost_tolerations(p: ProbeSettings) -> list[k8s.core.v1.TolerationArgs]:
    """A TPU serving pod's tolerations of a lost node, for ``p.node_lost_seconds``. Without them the API server's
    DefaultTolerationSeconds admission adds both for 300 s (kubernetes v1.36.3
    plugin/pkg/admission/defaulttolerationseconds/admission.go l.44-45 the defaults, l.140-162: added only to a pod
    that tolerates neither), so a group on a dead TPU VM kept a Ready leader, taking requests it could not serve, for
    five minutes before its worker was evicted and LWS recreated the group (lws v0.10.0 pod_controller.go l.211,
    ``PodDeleted``). The figure is the library's choice: shorter evicts sooner, at the cost of a group reload when a
    node stops reporting only briefly."""
    return [
        k8s.core.v1.TolerationArgs(
            key=taint, operator="Exists", effect="NoExecute", toleration_seconds=p.node_lost_seconds
        )
        for taint in NODE_LOST_TAINTS
    ]


EXEC_PROBE_TIMEOUT_SECONDS = 10
"""Timeout of an exec probe that runs a command-line tool (Kubernetes' default, 1 s, is too short for one that starts
an interpreter); at most the readiness period's default, so that checks do not overlap."""


def http_probes(
    path: str, port: int, p: ProbeSettings
) -> tuple[k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs]:
    """Startup, readiness and liveness probes, all ``GET path`` on ``port``, timed by ``p``."""
    action = k8s.core.v1.HTTPGetActionArgs(path=path, port=port, scheme="HTTP")
    return _timed_probes(p, http_get=action)


def tcp_probes(
    port: int, p: ProbeSettings
) -> tuple[k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs]:
    """Startup, readiness and liveness probes, all a TCP connect to ``port``, timed by ``p``: for a server that
    answers no HTTP and no ``grpc.health.v1`` health service on its own port."""
    return _timed_probes(p, tcp_socket=k8s.core.v1.TCPSocketActionArgs(port=port))


def _timed_probes(
    p: ProbeSettings,
    *,
    http_get: k8s.core.v1.HTTPGetActionArgs | None = None,
    tcp_socket: k8s.core.v1.TCPSocketActionArgs | None = None,
) -> tuple[k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs]:
    def probe(period: int, failures: int) -> k8s.core.v1.ProbeArgs:
        return k8s.core.v1.ProbeArgs(
            http_get=http_get, tcp_socket=tcp_socket, period_seconds=period, failure_threshold=failures
        )

    return (
        probe(p.startup_period_seconds, p.startup_failure_threshold),
        probe(p.readiness_period_seconds, p.readiness_failure_threshold),
        probe(p.liveness_period_seconds, p.liveness_failure_threshold),
    )


DEREGISTER_SECONDS = 30
"""Seconds a serving pod keeps taking requests after its deletion starts, before its server is told to stop: the
time the endpoint's removal takes to reach the load balancer, the endpoint picker and kube-proxy, which learn of the
deletion from watches (the Kubernetes tutorial "Explore Termination Behavior for Pods And Their Endpoints": a
terminating endpoint stays listed, ``ready: false``, while its pod drains). The slowest is the load balancer's: the
GKE NEG controller detaches a terminating pod's endpoint from its zonal NEG (kubernetes/ingress-gce issue 1574), and
vLLM refuses new connections once it has SIGTERM. 30 s is gateway-api-inference-extension's figure for vLLM behind a
GKE Gateway, "the highest value we observe on a supported load balancer" for readiness to the load balancer taking
the backend out of rotation (v1.5.0 config/manifests/vllm/gpu-deployment.yaml l.61-84, ``preStop.sleep.seconds:
30``); Google documents no figure. Requests that arrive in it are served, since the server has not begun to stop; the
requests in flight when the endpoint leaves the NEG keep running for the connection draining timeout
(:func:`tpu_serving.traffic.gateway.backend_policy`)."""

TEARDOWN_SECONDS = 30
"""Seconds left, after the drain, for a server to release its chips and exit before the kubelet's SIGKILL (the
library's own margin: vLLM tears its engine core and Ray workers down after the drain, vllm-tpu 0.29.0
vllm/v1/engine/core.py l.1541-1547 "starting resource teardown")."""


@dataclass(frozen=True)
class Shutdown:
    """How a serving pod leaves (a rollout, an HPA scale-down, a drain, a group recreation): it keeps serving for
    :data:`DEREGISTER_SECONDS` while its endpoint is removed (plus ``hold_seconds``), then its server drains the
    requests in flight for at most ``request_seconds``, the longest request the gateway lets run, and the pod's
    grace period covers all of it and a teardown.

    ``terminationGracePeriodSeconds`` counts from the deletion and includes the preStop hook (Kubernetes
    v1.36.3 pkg/kubelet/kuberuntime/kuberuntime_container.go l.893-912 ``killContainer``: the hook runs within the
    grace period, l.781-803, and the container is stopped with what is left of it); a ``sleep`` preStop may not
    exceed the grace period (pkg/apis/core/validation/validation.go l.3369-3386; the sleep action is GA from
    1.34, pkg/features/kube_features.go l.1785-1789)."""

    request_seconds: int = described(
        "Longest request the gateway lets run, in seconds (the gateway's requestTimeoutSeconds): the server "
        "drains for as long before it stops.",
        default=REQUEST_TIMEOUT_SECONDS,
        ge=1,
        le=86400,
    )
    hold_seconds: int = described(
        "Further seconds the server keeps running, unready, after its endpoint is removed and before it drains "
        "(a prefill server: the KV pull timeout, so decode finishes pulling what it prefilled).",
        default=0,
        ge=0,
        le=3600,
    )

    @property
    def pre_stop_seconds(self) -> int:
        """Seconds the preStop hook waits before the server gets SIGTERM."""
        return DEREGISTER_SECONDS + self.hold_seconds

    @property
    def grace_seconds(self) -> int:
        """``terminationGracePeriodSeconds``: the preStop wait, the drain, the teardown."""
        return self.pre_stop_seconds + self.request_seconds + TEARDOWN_SECONDS

    def sleep(self, seconds: int | None = None) -> k8s.core.v1.LifecycleArgs:
        """A preStop hook that sleeps ``seconds`` (default :attr:`pre_stop_seconds`): the kubelet's own sleep
        action, which needs no binary in the image."""
        wait = self.pre_stop_seconds if seconds is None else seconds
        handler = k8s.core.v1.LifecycleHandlerArgs(sleep=k8s.core.v1.SleepActionArgs(seconds=wait))
        return k8s.core.v1.LifecycleArgs(pre_stop=handler)

    def exec(self, script: str) -> k8s.core.v1.LifecycleArgs:
        """A preStop hook that runs ``script`` in ``/bin/sh`` (the kubelet ends it with the grace period)."""
        handler = k8s.core.v1.LifecycleHandlerArgs(exec_=k8s.core.v1.ExecActionArgs(command=["/bin/sh", "-c", script]))
        return k8s.core.v1.LifecycleArgs(pre_stop=handler)
