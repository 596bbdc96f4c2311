"""The vLLM leader's liveness: its ``/health``, and progress while requests are in flight.

vLLM's ``/health`` answers 200 while its engine loop is frozen (vllm-project/vllm PR #36451, "/health returns 200
even when EngineCore's busy loop is completely frozen ... Kubernetes probes never notice", open at vLLM 0.29), so a
liveness probe on ``/health`` never restarts a wedged engine. A probe that sends a completion would queue behind the
users' requests and kill loaded groups under load. This one reads the server's own ``/metrics`` instead: the gauge of
requests running and the counter of generated tokens (vllm-tpu 0.29.0 vllm/v1/metrics/loggers.py l.494
``vllm:num_requests_running``, l.704-711 ``vllm:generation_tokens``, exposed as ``vllm:generation_tokens_total``;
both labelled ``model_name`` and ``engine``). It keeps, in a file of the container, the last token count and since
when it has not moved while requests ran; it fails when that lasted ``stallSeconds``, or when the server does not
answer ``/health``. The kubelet then restarts the container after ``livenessFailureThreshold`` failures, and LWS
recreates the group (RecreateGroupAfterStart). A new container starts with a fresh file: the kubelet makes a new
writable layer for it.

And when the gauge says nothing runs, it sends the engine one completion of one token: a gauge that reads 0 may be
frozen, since vLLM records its scheduler's gauges from the engine's outputs (vllm-tpu 0.29.0
vllm/v1/engine/async_llm.py l.770-826: ``output_handler`` awaits the engine core's outputs and calls the stat
loggers' ``record(scheduler_stats=...)`` once per batch; read in the wheel), so an
engine that hangs on the first request after an idle spell keeps reporting 0 running and no stall is seen (SRE
review round 39, B1). While the engine is idle the completion queues behind nothing; when it is busy the counters
judge it. A prefill server of the disaggregated mode gets no completion: a request that ends at its own token limit
holds its KV blocks until a decode pulls them or the pull times out (docs/design/disaggregated-vllm.md, open risks).

The leader's readiness runs the same check with its own record (:data:`READY_STATE`) and a shorter window,
``readyStallSeconds`` (:func:`..lifecycle.readiness`): a frozen engine's leader leaves the Service and the endpoint
picker's pool within minutes, and the restart stays liveness's (SRE review round 41, M3).

When ``/metrics`` lacks any of the three series, the engine's load and progress are unknown, and the check passes
on ``/health`` alone, printing :data:`UNKNOWN_LOAD` (SRE review M3). An absent series read 0: the gauges as an idle
engine, so the completion went to a busy engine behind its queue and timed out, and readiness took every loaded leader
out of the Service and the InferencePool while liveness restarted loaded groups; the counter as no token generated,
a stall timed on requests that generate. vllm-tpu 0.29.0 exports all three from its start (its Prometheus logger
makes each engine's labelled child as it is built: vllm/v1/metrics/loggers.py l.493-511 and l.704-711,
vllm/v1/metrics/utils.py l.11-19 ``create_metric_per_engine``), so they are absent only when its stat loggers are off:
``--disable-log-stats``, which ``extraArgs`` refuses (:data:`~.facts.STATS_OFF_FLAGS`), or an image whose engine the
library did not build its flags for (``images.unverified_vllm``). A dead engine is still caught: ``/health``, read
first, answers 503 once the engine core has died (vllm/entrypoints/serve/instrumentator/health.py l.22-33,
``AsyncLLM.check_health`` vllm/v1/engine/async_llm.py l.1024-1027), and the startup probe judges every start. An
engine frozen behind a ``/health`` of 200 is then missed, as it was before this probe; failing under unknown load
instead would fail a healthy fleet whenever it is busy, which no probe can tell from a frozen one without the series.
The kubelet makes no event of a passing probe's output: the message is for whoever runs the command by hand.

The probe runs only once the startup probe has passed (Kubernetes runs liveness after startup succeeds), so a model
still loading or compiling is never judged by it.
"""

import json
import shlex
from dataclasses import dataclass

import pulumi_kubernetes as k8s

from ...common.podspec import ProbeSettings
from ...common.settings import described
from .facts import COMPLETIONS_PATH, HEALTH_PATH, METRICS_PATH, PROBE_PROMPT, PYTHON, VllmMetric

PROGRESS_STATE = "/tmp/tpu-serving-progress.json"
"""Where the liveness probe keeps the last token count and since when it stood still (the container's own writable
layer: the leader's root file system is not read-only)."""
READY_STATE = "/tmp/tpu-serving-ready.json"
"""The readiness probe's own record of the same: the two probes run on their own periods and windows."""


@dataclass(frozen=True)
class VllmProbeSettings(ProbeSettings):
    """The probes of a vLLM server: those of every server, and how long its engine may stand still."""

    stall_seconds: int = described(
        "Seconds a vLLM leader with requests running may generate no token before its liveness check fails (it "
        "reads the server's /metrics; the container restarts after `livenessFailureThreshold` more checks and LWS "
        "recreates the group); 0: liveness reads /health only. vLLM's /health answers 200 while its engine is "
        "frozen.",
        default=600,
        ge=0,
        le=86400,
    )
    ready_stall_seconds: int = described(
        "Seconds a vLLM leader with requests running may generate no token before it fails readiness and leaves "
        "the Service and the InferencePool (readiness reads the server's /metrics and, while nothing runs, sends it "
        "one token); Ready again once the engine generates. Below `stallSeconds`, so the hung leader takes no "
        "traffic while liveness waits to restart it; 0: readiness reads /health only.",
        default=120,
        ge=0,
        le=86400,
    )


UNKNOWN_LOAD = (
    f"/metrics lacks {VllmMetric.REQUESTS_RUNNING.value}, {VllmMetric.REQUESTS_WAITING.value} or "
    f"{VllmMetric.GENERATION_TOKENS.value}_total (stat loggers off? --disable-log-stats): load and progress unknown, "
    "judged on /health alone"
)
"""What the probe prints when ``/metrics`` lacks a series it reads, and passes on ``/health`` (module docstring)."""

IDLE_COMPLETION_TIMEOUT_SECONDS = 8
"""Seconds the idle completion may take; one token of a short prompt on an idle engine takes well under a second."""
HTTP_TIMEOUT_SECONDS = 5
"""Seconds each of ``/health`` and ``/metrics`` may take."""
INTERPRETER_SECONDS = 2
"""The Python interpreter's start, the margin beside the requests' own timeouts."""
PROGRESS_PROBE_TIMEOUT_SECONDS = 2 * HTTP_TIMEOUT_SECONDS + IDLE_COMPLETION_TIMEOUT_SECONDS + INTERPRETER_SECONDS
"""The liveness probe's ``timeoutSeconds``: the three requests' timeouts in a row and the interpreter's start, so a
slow but answering engine fails a request's own timeout, not the kubelet's (the kubelet enforces an exec probe's
timeout; SRE review round 40, m3: 5 + 5 + 8 s of requests against a 10 s timeout)."""


READY_HTTP_TIMEOUT_SECONDS = 3
"""Seconds each of ``/health`` and ``/metrics`` may take in the readiness check, which runs every
``readinessPeriodSeconds`` (10 s by default) and must end within it."""
READY_IDLE_TIMEOUT_SECONDS = 2
"""Seconds the readiness check's idle completion may take: one token on an idle engine, as for liveness."""
READY_PROBE_TIMEOUT_SECONDS = 2 * READY_HTTP_TIMEOUT_SECONDS + READY_IDLE_TIMEOUT_SECONDS + INTERPRETER_SECONDS
"""The readiness check's ``timeoutSeconds``, summed as :data:`PROGRESS_PROBE_TIMEOUT_SECONDS` is; it is also the
shortest ``readinessPeriodSeconds`` it runs on, so that one check ends before the next is due."""


def progress_code(
    port: int,
    stall_seconds: int,
    state: str = PROGRESS_STATE,
    idle_body: str | None = None,
    idle_timeout: float = IDLE_COMPLETION_TIMEOUT_SECONDS,
    http_timeout: float = HTTP_TIMEOUT_SECONDS,
) -> str:
    """The probe's Python: exit 1 when ``/health`` fails, when requests have been running or waiting for
    ``stall_seconds`` with the token counter unchanged, or, with ``idle_body`` (a completion request's JSON), when
    none runs or waits and that completion fails within ``idle_timeout`` seconds; else record the count (in the file
    ``state``) and exit 0. Waiting requests count as busy, as the engine-stalled alert counts them: a burst that came
    after the gauges were read would queue the completion behind its prefills (SRE review round 42, m2), and an
    engine that stops scheduling with requests queued is stalled.
    ``/health`` and ``/metrics`` may take ``http_timeout`` seconds each. Should ``/metrics`` lack any of the three
    series, the load and progress are unknown: it sends no completion, times no stall and exits 0 once ``/health``
    has answered (module docstring)."""
    base = f"http://127.0.0.1:{port}"
    running, waiting = VllmMetric.REQUESTS_RUNNING.value, VllmMetric.REQUESTS_WAITING.value
    tokens = f"{VllmMetric.GENERATION_TOKENS.value}_total"
    idle = (
        [
            "if busy == 0:",
            f"    q = r.Request('{base}{COMPLETIONS_PATH}', data={idle_body!r}.encode(),"
            " headers={'Content-Type': 'application/json'})",
            f"    r.urlopen(q, timeout={idle_timeout:g})",
        ]
        if idle_body
        else []
    )
    return "\n".join(
        [
            "import json, time, urllib.request as r",
            f"r.urlopen('{base}{HEALTH_PATH}', timeout={http_timeout:g})",
            f"text = r.urlopen('{base}{METRICS_PATH}', timeout={http_timeout:g}).read().decode()",
            "def total(name):",
            "    v = [float(l.rsplit(' ', 1)[1]) for l in text.splitlines()"
            " if l.startswith(name + '{') or l.startswith(name + ' ')]",
            "    return sum(v) if v else None",
            f"run, wait, tokens, now = total('{running}'), total('{waiting}'), total('{tokens}'), time.time()",
            "known = None not in (run, wait, tokens)",
            "busy = run + wait if known else None",
            "if not known:",
            f"    print({UNKNOWN_LOAD!r})",
            *idle,
            "try:",
            f"    last = json.load(open('{state}'))",
            "except (OSError, ValueError):",
            "    last = {'tokens': tokens, 'since': now}",
            "if not known or busy == 0 or tokens != last['tokens']:",
            "    last = {'tokens': tokens, 'since': now}",
            f"json.dump(last, open('{state}', 'w'))",
            f"raise SystemExit(1 if now - last['since'] >= {stall_seconds} else 0)",
        ]
    )


def window_problems(key: str, p: VllmProbeSettings) -> list[str]:
    """Readiness's window ends before liveness's (else the container restarts while the hung leader still takes
    traffic, and the shorter window does nothing), and its check fits its period."""
    ready, live = p.ready_stall_seconds, p.stall_seconds
    found = []
    if ready and live and ready >= live:
        found.append(
            f"{key}.readyStallSeconds = {ready}: at least stallSeconds ({live}), so the container restarts before the "
            f"hung leader leaves the Service; set it below {live}, or 0 to keep readiness on /health"
        )
    if ready and p.readiness_period_seconds < READY_PROBE_TIMEOUT_SECONDS:
        found.append(
            f"{key}.readinessPeriodSeconds = {p.readiness_period_seconds}: the readiness check of readyStallSeconds "
            f"takes up to {READY_PROBE_TIMEOUT_SECONDS} s; at least {READY_PROBE_TIMEOUT_SECONDS}, or "
            "readyStallSeconds 0 to keep readiness on /health"
        )
    return found


def liveness(
    p: ProbeSettings, http: k8s.core.v1.ProbeArgs, port: int, idle_body: str | None = None
) -> k8s.core.v1.ProbeArgs:
    """The leader's liveness: ``http`` (``GET /health``) when ``p`` sets no stall window (or is not a vLLM server's
    settings), else the progress probe on ``port``, timed as liveness is, sending ``idle_body`` when idle."""
    stall = p.stall_seconds if isinstance(p, VllmProbeSettings) else 0
    if not stall:
        return http
    code = progress_code(port, stall, idle_body=idle_body)
    return k8s.core.v1.ProbeArgs(
        exec_=k8s.core.v1.ExecActionArgs(command=["/bin/sh", "-c", f"exec {PYTHON} -c {shlex.quote(code)}"]),
        period_seconds=p.liveness_period_seconds,
        failure_threshold=p.liveness_failure_threshold,
        timeout_seconds=PROGRESS_PROBE_TIMEOUT_SECONDS,
        termination_grace_period_seconds=LIVENESS_KILL_SECONDS,
    )


LIVENESS_KILL_SECONDS = 30
"""The grace a liveness kill gives the stalled leader (the probe's ``terminationGracePeriodSeconds``): the kubelet takes
a liveness probe's own grace over the pod's (kubernetes v1.36.3 pkg/kubelet/kuberuntime/kuberuntime_container.go
l.1445-1448, ``setTerminationGracePeriod``), so a stalled engine, out of rotation since its readiness failed, is not
given the pod's drain (the preStop wait and ``--shutdown-timeout``, meant for a healthy scale-down) before its group
is recreated (SRE review 30, m4: the kill waited 360 s more)."""


def idle_completion(served_model_name: str) -> str:
    """The idle completion's JSON: one token of the served model (``--served-model-name``), the prober's prompt."""
    return json.dumps({"model": served_model_name, "prompt": PROBE_PROMPT, "max_tokens": 1})
