"""How vLLM's pods leave and how their health is checked beyond ``GET /health``: the preStop hooks and grace period
of every LeaderWorkerSet (single-engine and each disaggregated role), and a prefill server's readiness that its
preStop fails (issue "Serving survives its own lifecycle").

Liveness stays ``GET /health`` on the engine's own port, in every mode. A disaggregated engine wedged by a failed KV
pull keeps answering it (the tpu-inference 0.29.0 connector inserts arrays that never became ready,
:data:`~.kv.PULL_TIMEOUT_ENV`); a liveness probe that generated a token to see it queued behind user traffic, so an
overload failed it and recreated the groups that carried the load. The wedge is caught out of band instead: the role
alert on requests in flight and no token generated (:func:`tpu_serving.operations.observability_roles.stalled_query`)."""

import shlex

import pulumi_kubernetes as k8s

from ...common.podspec import EXEC_PROBE_TIMEOUT_SECONDS, Shutdown
from . import progress
from .args import VllmServingArgs
from .facts import DRAINING_MARKER, HEALTH_PATH, PYTHON, RAY_GCS_PORT
from .kv import KvRole
from .progress import idle_completion


def shutdown(args: VllmServingArgs) -> Shutdown:
    """How the group's pods leave (:class:`~tpu_serving.common.podspec.Shutdown`): a prefill server holds, unready, for its
    KV pull timeout before it drains, so the decode servers finish pulling what it prefilled (a pull that outlives
    it wedges decode: :data:`~.kv.PULL_TIMEOUT_ENV`)."""
    kv = args.kv_transfer
    if kv is None or kv.role != KvRole.PREFILL:
        return args.shutdown
    return Shutdown(args.shutdown.request_seconds, hold_seconds=args.shutdown.hold_seconds + kv.pull_timeout_seconds)


def leader_lifecycle(args: VllmServingArgs) -> k8s.core.v1.LifecycleArgs:
    """The leader's preStop: it keeps serving while its endpoint is removed, then SIGTERM starts vLLM's drain
    (:data:`~.facts.SHUTDOWN_TIMEOUT_FLAG`). A prefill leader first fails its readiness (:data:`~.facts.DRAINING_MARKER`,
    :func:`readiness`), so no router picks it while it waits out the KV pull timeout."""
    s = shutdown(args)
    if args.kv_transfer is not None and args.kv_transfer.role == KvRole.PREFILL:
        return s.exec(f"touch {DRAINING_MARKER}; sleep {s.pre_stop_seconds}")
    return s.sleep()


RAY_HEAD_POLL_SECONDS = 5
"""Seconds between a stopping worker's checks of its group's Ray head."""


def worker_lifecycle(args: VllmServingArgs) -> k8s.core.v1.LifecycleArgs:
    """A worker's preStop: it holds its host while the group's Ray head answers, so a leader that drains its requests
    still has every host; when the leader's server exits, its head goes with it and the worker stops. The kubelet
    ends the hook at the grace period in any case. A worker gets SIGTERM with its leader (a group leaves whole:
    the LWS controller deletes the group's leader and its worker StatefulSet together); without the hook Ray's
    worker process exits at once and the engine loses its hosts mid-request."""
    check = f"ray health-check --address=${{LWS_LEADER_ADDRESS}}:{RAY_GCS_PORT}"
    return shutdown(args).exec(f"while {check} >/dev/null 2>&1; do sleep {RAY_HEAD_POLL_SECONDS}; done")


def _python_probe(code: str, period: int, failures: int, timeout: int, guard: str = "") -> k8s.core.v1.ProbeArgs:
    """An exec probe that runs ``code`` in the image's Python (after the shell test ``guard``, when given)."""
    script = f"{guard + ' && ' if guard else ''}exec {PYTHON} -c {shlex.quote(code)}"
    return k8s.core.v1.ProbeArgs(
        exec_=k8s.core.v1.ExecActionArgs(command=["/bin/sh", "-c", script]),
        period_seconds=period,
        failure_threshold=failures,
        timeout_seconds=timeout,
    )


def readiness(args: VllmServingArgs, http: k8s.core.v1.ProbeArgs, port: int) -> k8s.core.v1.ProbeArgs:
    """The leader's readiness. With ``probes.readyStallSeconds`` set, the progress check of liveness
    (:func:`.progress.progress_code`) on the engine's ``port``, with its own record and the shorter window: a leader
    whose engine froze while ``/health`` still answers 200 fails it and leaves the Service and the InferencePool (the
    endpoint picker drops a pod that is not Ready: gateway-api-inference-extension v1.5.0
    pkg/epp/controller/pod_reconciler.go l.90-95, ``IsPodReady`` in pkg/epp/util/pod/pod.go l.23-36) within
    minutes, while liveness waits out ``stallSeconds`` to restart it (SRE review round 41, M3). Else ``http``
    (``GET /health``).

    A prefill leader's readiness also fails once the preStop hook has created :data:`~.facts.DRAINING_MARKER` (an
    HTTP probe cannot be failed from outside the server); the kubelet keeps running readiness probes while a pod
    terminates, so the endpoint's ``serving`` condition turns false. It sends no idle token, as its liveness does not
    (:func:`liveness`)."""
    kv = args.kv_transfer
    prefill = kv is not None and kv.role == KvRole.PREFILL
    p = args.probes
    guard = f"[ ! -e {DRAINING_MARKER} ]" if prefill else ""
    if stall := p.ready_stall_seconds:
        idle = None if prefill else idle_completion(args.served_model_name)
        code = progress.progress_code(
            port,
            stall,
            state=progress.READY_STATE,
            idle_body=idle,
            idle_timeout=progress.READY_IDLE_TIMEOUT_SECONDS,
            http_timeout=progress.READY_HTTP_TIMEOUT_SECONDS,
        )
        timeout = progress.READY_PROBE_TIMEOUT_SECONDS
    elif prefill:
        code = f"import urllib.request as r; r.urlopen('http://127.0.0.1:{port}{HEALTH_PATH}', timeout=5)"
        timeout = EXEC_PROBE_TIMEOUT_SECONDS
    else:
        return http
    return _python_probe(code, p.readiness_period_seconds, p.readiness_failure_threshold, timeout, guard)


def liveness(args: VllmServingArgs, http: k8s.core.v1.ProbeArgs, port: int) -> k8s.core.v1.ProbeArgs:
    """The leader's liveness (:func:`.progress.liveness`): with the idle completion of the served model, but on a
    prefill server, where a request that ends at its own token limit holds KV blocks until pulled or timed out."""
    kv = args.kv_transfer
    idle = None if kv is not None and kv.role == KvRole.PREFILL else idle_completion(args.served_model_name)
    return progress.liveness(args.probes, http, port, idle)
