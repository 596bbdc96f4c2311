"""backends.vllm.progress: the vLLM leader's liveness probe, its Python run for real against a server whose
``/metrics`` is rendered by prometheus_client, the library vLLM exports its metrics with (vllm-tpu 0.29.0
vllm/v1/metrics/loggers.py: a Gauge ``vllm:num_requests_running`` and a Counter ``vllm:generation_tokens``, both
labelled ``model_name`` and ``engine``), and as the stacks render it."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from tests.conftest import plan_of
from tests.fixtures.configs import plan_edited
from tpu_serving.backends.vllm.facts import DRAINING_MARKER
from tpu_serving.backends.vllm.progress import (
    READY_PROBE_TIMEOUT_SECONDS,
    READY_STATE,
    VllmProbeSettings,
    idle_completion,
    liveness,
    progress_code,
    window_problems,
)
from tpu_serving.common.podspec import ProbeSettings
from tpu_serving_tools.preview.offline import kubernetes_objects

STAND_IN = b'http_requests_total{handler="/v1/completions",method="POST",status="2xx"} 12.0\n'
"""A series of the server's own HTTP instrumentation, which /metrics serves without the stat loggers (vllm-tpu 0.29.0
vllm/entrypoints/serve/instrumentator/metrics.py l.65-78: prometheus-fastapi-instrumentator's, on the registry /metrics serves)."""
LABELS = {"model_name": "meta-llama/Llama-3.3-70B Instruct", "engine": "0"}  # a space: values split from the right


@dataclass
class Server:
    port: int
    running: Gauge
    tokens: Counter
    waiting: Gauge
    healthy: list[bool]
    completions: list[str]
    """What /v1/completions does: "ok" (200 with a choice), "hang" (answers after 30 s), "error" (500)."""
    received: list[dict]
    hidden: set[str]
    """Names whose lines /metrics leaves out: ``{"vllm:"}`` is an engine run with ``--disable-log-stats``."""


@pytest.fixture
def server() -> Iterator[Server]:
    registry = CollectorRegistry()
    running = Gauge("vllm:num_requests_running", "requests running", list(LABELS), registry=registry)
    waiting = Gauge("vllm:num_requests_waiting", "requests waiting", list(LABELS), registry=registry)
    waiting.labels(**LABELS).set(0)
    tokens = Counter("vllm:generation_tokens", "tokens generated", list(LABELS), registry=registry)
    running.labels(**LABELS).set(0)
    tokens.labels(**LABELS).inc(0)
    healthy, completions, received, hidden = [True], ["ok"], [], set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            received.append({"path": self.path, "body": json.loads(body or b"{}")})
            if completions[0] == "hang":
                time.sleep(30)
            self.send_response(200 if completions[0] == "ok" else 500)
            self.end_headers()
            self.wfile.write(b'{"choices": [{"text": "OK"}]}')

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == "/health":
                self.send_response(200 if healthy[0] else 503)
                self.end_headers()
            elif self.path == "/metrics":
                lines = generate_latest(registry).splitlines(keepends=True) + [STAND_IN]
                body = b"".join(line for line in lines if not any(h.encode() in line for h in hidden))
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_response(404)
                self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(httpd.server_address[1], running, tokens, waiting, healthy, completions, received, hidden)
    finally:
        httpd.shutdown()


def probe(server: Server, state: Path, stall_seconds: int = 1, idle_body: str | None = None) -> int:
    code = progress_code(server.port, stall_seconds, str(state), idle_body, idle_timeout=1)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30).returncode


@pytest.mark.slow  # runs the probe in a child interpreter against a live server, and sleeps out its windows
def test_progress_code_fails_once_requests_run_without_a_token_for_the_window(server: Server, tmp_path: Path):
    state = tmp_path / "progress.json"
    server.running.labels(**LABELS).set(4)
    server.tokens.labels(**LABELS).inc(100)
    assert probe(server, state) == 0  # first look: the count is recorded
    time.sleep(1.2)
    assert probe(server, state) == 1  # running 4, still 100 tokens after the window: stalled
    server.tokens.labels(**LABELS).inc(1)
    assert probe(server, state) == 0  # a token: progress again
    time.sleep(1.2)
    server.running.labels(**LABELS).set(0)
    assert probe(server, state) == 0  # idle: nothing to generate is not a stall


@pytest.mark.slow  # runs the probe in a child interpreter against a live server, and sleeps out its windows
def test_progress_code_passes_while_tokens_grow_and_fails_when_health_fails(server: Server, tmp_path: Path):
    state = tmp_path / "progress.json"
    server.running.labels(**LABELS).set(2)
    for _ in range(3):
        server.tokens.labels(**LABELS).inc(10)
        assert probe(server, state) == 0
        time.sleep(0.6)
    server.healthy[0] = False
    assert probe(server, state, stall_seconds=3600) != 0


@pytest.mark.slow  # runs the probe in a child interpreter against a live server, and sleeps out its windows
def test_progress_code_sends_one_completion_when_idle_and_fails_when_it_hangs(server: Server, tmp_path: Path):
    """SRE review round 39, B1: vLLM records its gauges from the engine's outputs, so an engine that hangs on the first
    request after an idle spell reads 0 running for ever. While the gauge reads 0 the probe sends one completion."""
    state, body = tmp_path / "progress.json", idle_completion("llama-70b")
    assert probe(server, state, stall_seconds=3600, idle_body=body) == 0
    assert server.received == [
        {"path": "/v1/completions", "body": {"model": "llama-70b", "prompt": "Say OK.", "max_tokens": 1}}
    ]
    server.completions[0] = "hang"
    assert probe(server, state, stall_seconds=3600, idle_body=body) != 0  # frozen at 0 running: caught
    server.completions[0] = "error"
    assert probe(server, state, stall_seconds=3600, idle_body=body) != 0
    server.running.labels(**LABELS).set(3)
    server.completions[0] = "hang"
    sent = len(server.received)
    assert probe(server, state, stall_seconds=3600, idle_body=body) == 0  # busy: the counters judge, no request
    assert len(server.received) == sent


def test_liveness_timeout_covers_the_probes_own_request_timeouts():
    """SRE review round 40, m3: /health 5 s, /metrics 5 s and the idle completion 8 s ran against a 10 s timeout; the
    kubelet's timeout must not cut a probe whose requests are still within their own."""
    code = progress_code(8000, 600, idle_body=idle_completion("m"))
    own = sum(float(t) for t in re.findall(r"timeout=([0-9.]+)", code))
    assert own == 18
    (probe,) = [
        c["livenessProbe"]
        for o in kubernetes_objects(plan_of("vllm-llama33-70b-v5e16"))
        if o["kind"] == "LeaderWorkerSet"
        for c in o["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"]
        if "exec" in c.get("livenessProbe", {})
    ]
    assert probe["timeoutSeconds"] > own


def test_liveness_is_the_progress_probe_for_vllm_settings_and_health_otherwise():
    http = object()
    p = VllmProbeSettings(stall_seconds=300, liveness_period_seconds=30, liveness_failure_threshold=4)
    live = liveness(p, http, 8100)  # type: ignore[arg-type]
    command = live.exec_.command  # type: ignore[union-attr]
    assert command[:2] == ["/bin/sh", "-c"] and "127.0.0.1:8100/metrics" in command[2] and ">= 300" in command[2]
    assert (live.period_seconds, live.failure_threshold) == (30, 4)
    assert liveness(VllmProbeSettings(stall_seconds=0), http, 8100) is http  # type: ignore[arg-type]
    assert liveness(ProbeSettings(), http, 8100) is http  # type: ignore[arg-type]


def _leader(template: dict) -> dict | None:
    """A group's leader pod template: ``leaderTemplate``, or for groups of one pod (single-host, no ``leaderTemplate``:
    vllm.pods) ``workerTemplate``."""
    return template.get("leaderTemplate") or template.get("workerTemplate")


def _leader_probes(stack: str, kind: str = "livenessProbe") -> list[tuple[dict, int, str]]:
    """Each vLLM leader container's probe of ``kind``, the port its vLLM server listens on (``--port`` of its command:
    behind the routing sidecar on decode), and its role (``""`` outside the disaggregated mode)."""
    found = []
    for res in plan_of(stack).resources:
        spec = res.inputs.get("spec") or {}
        if res.type.endswith(":LeaderWorkerSet"):
            templates = [("", _leader(spec["leaderWorkerTemplate"]))]
        elif res.type.endswith(":DisaggregatedSet"):
            templates = [(r["name"], _leader(r["spec"]["leaderWorkerTemplate"])) for r in spec["roles"]]
        else:
            continue
        for role, tpl in templates:
            for c in (tpl or {}).get("spec", {}).get("containers", []):
                if c["name"] == "vllm-leader":
                    port = int(re.search(r"--port[ =](\d+)", c["args"][0]).group(1))
                    found.append((c[kind], port, role))
    return found


@pytest.mark.parametrize(
    "stack", ["vllm-llama33-70b-v5e16", "vllm-llama31-405b-v6e16", "vllm-llama33-70b-disagg-v6e8x2"]
)
def test_liveness_renders_on_every_vllm_leader(stack: str):
    probes = _leader_probes(stack)
    assert probes, f"{stack}: no vLLM leader found"
    for live, port, role in probes:
        script = live["exec"]["command"][2]
        assert "vllm:generation_tokens_total" in script and ">= 600" in script
        assert f"127.0.0.1:{port}/metrics" in script  # vLLM's own port (on decode, not the sidecar's 8000)
        # the idle completion, but on prefill (a request ending at its own limit holds KV blocks there)
        assert (f"127.0.0.1:{port}/v1/completions" in script) == (role != "prefill"), (stack, role)
    if stack.endswith("disagg-v6e8x2"):
        assert sorted(role for *_, role in probes) == ["decode", "prefill"]
        assert len({port for _, port, _ in probes}) == 2


VLLM_STACKS = ["vllm-llama33-70b-v5e16", "vllm-llama31-405b-v6e16", "vllm-llama33-70b-disagg-v6e8x2"]


@pytest.mark.parametrize("stack", VLLM_STACKS)
def test_readiness_renders_the_progress_check_on_every_vllm_leader(stack: str):
    """SRE review round 41, M3: a leader whose engine froze behind a /health that answers 200 left the Service only
    when liveness restarted it, 10-20 minutes on; readiness now reads progress on its own, shorter window."""
    probes = _leader_probes(stack, "readinessProbe")
    assert probes, f"{stack}: no vLLM leader found"
    for ready, port, role in probes:
        script = ready["exec"]["command"][2]
        assert READY_STATE in script and ">= 120" in script and f"127.0.0.1:{port}/metrics" in script
        assert (f"127.0.0.1:{port}/v1/completions" in script) == (role != "prefill"), (stack, role)
        assert (DRAINING_MARKER in script) == (role == "prefill"), (stack, role)
        own = sum(float(t) for t in re.findall(r"timeout=([0-9.]+)", script))
        assert own < ready["timeoutSeconds"] == READY_PROBE_TIMEOUT_SECONDS <= ready["periodSeconds"]


def test_readiness_is_health_again_with_no_window():
    plan = plan_edited(
        "vllm-llama33-70b-v5e16", serving=lambda s: s.setdefault("probes", {}).update(readyStallSeconds=0)
    )
    (leader,) = [
        c
        for o in kubernetes_objects(plan)
        if o["kind"] == "LeaderWorkerSet"
        for c in o["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"]
        if c["name"] == "vllm-leader"
    ]
    assert leader["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8000, "scheme": "HTTP"}


def test_window_problems_refuse_a_readiness_window_liveness_outruns_or_a_period_the_check_outlasts():
    assert window_problems("k", VllmProbeSettings()) == []
    assert window_problems("k", VllmProbeSettings(ready_stall_seconds=0, readiness_period_seconds=1)) == []
    (late,) = window_problems("k", VllmProbeSettings(stall_seconds=300, ready_stall_seconds=300))
    assert late.startswith("k.readyStallSeconds = 300: at least stallSeconds (300)") and "below 300" in late
    (fast,) = window_problems("k", VllmProbeSettings(readiness_period_seconds=5))
    assert fast.startswith("k.readinessPeriodSeconds = 5:") and f"at least {READY_PROBE_TIMEOUT_SECONDS}" in fast
    assert window_problems("k", VllmProbeSettings(stall_seconds=0, ready_stall_seconds=60)) == []


def _rendered_readiness(server: Server, tmp_path: Path) -> Callable[[], int]:
    """The flagship's readiness command itself, pointed at the test server, its window 1 s: run, it gives the exit
    code."""
    ((ready, port, _),) = _leader_probes("vllm-llama33-70b-v5e16", "readinessProbe")
    script = (
        ready["exec"]["command"][2]
        .replace(f"127.0.0.1:{port}", f"127.0.0.1:{server.port}")
        .replace(READY_STATE, str(tmp_path / "ready.json"))
        .replace(">= 120", ">= 1")
        .replace("exec python3 ", f"exec {sys.executable} ")
    )
    return lambda: subprocess.run(["/bin/sh", "-c", script], capture_output=True, timeout=30).returncode


@pytest.mark.slow  # runs the rendered probe in a child shell against a live server
def test_readiness_as_rendered_fails_on_a_frozen_engine_and_passes_once_it_generates(server: Server, tmp_path: Path):
    """The flagship's readiness command itself, pointed at the test server: it fails while the idle completion hangs
    (an engine frozen with its gauge at 0), and while requests run with no token for the window."""
    check = _rendered_readiness(server, tmp_path)
    assert check() == 0 and server.received[-1]["path"] == "/v1/completions"
    server.completions[0] = "hang"
    assert check() != 0  # frozen at 0 running
    server.completions[0] = "ok"
    assert check() == 0  # it answers again
    server.running.labels(**LABELS).set(2)
    assert check() == 0  # busy, counting from the last check
    time.sleep(1.2)
    assert check() != 0  # requests ran for the window with no token
    server.tokens.labels(**LABELS).inc(5)
    assert check() == 0  # it generated: Ready again


@pytest.mark.slow  # runs the probe in a child interpreter against a live server, and sleeps out its window
def test_progress_code_counts_waiting_requests_as_busy(server: Server, tmp_path: Path):
    """SRE review round 42, m2: with requests waiting (a burst after the gauges were read, or an engine that stopped
    scheduling) the probe sends no completion, which would queue behind them, and times the stall instead."""
    state, body = tmp_path / "progress.json", idle_completion("llama-70b")
    server.waiting.labels(**LABELS).set(4)
    assert probe(server, state, stall_seconds=1, idle_body=body) == 0
    assert server.received == []
    time.sleep(1.2)
    assert probe(server, state, stall_seconds=1, idle_body=body) != 0  # waited the window with no token


@pytest.mark.parametrize("stack", ["vllm-llama33-70b-v5e16", "vllm-llama33-70b-disagg-v6e8x2"])
def test_liveness_kill_does_not_wait_out_the_pods_drain(stack):
    """SRE review 30, m4: a liveness kill of a stalled leader waited the pod's 360 s grace (its preStop wait and the
    --shutdown-timeout drain meant for a healthy scale-down); the probe's own grace is the kubelet's choice."""
    probes = [probe for probe, _, _ in _leader_probes(stack) if "exec" in probe]
    assert probes and all(p["terminationGracePeriodSeconds"] == 30 for p in probes), probes


@pytest.mark.slow  # runs the rendered probe in a child shell against a live server, and sleeps out its window
def test_readiness_as_rendered_passes_a_busy_engine_whose_metrics_are_off_and_still_reads_health(
    server: Server, tmp_path: Path
):
    """SRE review M3: an engine run with ``--disable-log-stats`` exports no vllm: series; the check read the absent
    gauges as 0 running, sent its completion behind the users' queue and failed every busy leader (rc 1 three times
    in a row against completions that took 5 s). Load unknown: no completion and no stall verdict, however long;
    ``/health`` is still judged."""
    check = _rendered_readiness(server, tmp_path)
    server.hidden.add("vllm:")
    server.completions[0] = "hang"  # the engine is busy: a completion would wait behind the queue
    assert [check() for _ in range(3)] == [0, 0, 0]
    time.sleep(1.2)
    assert check() == 0  # longer than the window: no stall is timed on series that are not there
    assert server.received == []
    server.healthy[0] = False
    assert check() != 0


@pytest.mark.slow  # runs the probe in a child interpreter against a live server, and sleeps out its window
@pytest.mark.parametrize(
    "hidden", [{"vllm:num_requests_running"}, {"vllm:num_requests_waiting"}, {"vllm:generation_tokens"}]
)
def test_progress_code_judges_nothing_on_a_series_that_is_absent(server: Server, tmp_path: Path, hidden: set[str]):
    """Any one series absent reads 0 all the same: the gauges as an idle engine (the completion sent under unknown
    load), the counter as no progress (a stall timed on requests that generate). Each absence is unknown; and the
    record starts afresh once the series are back, so the time they were absent is not counted as a stall."""
    state, body = tmp_path / "progress.json", idle_completion("llama-70b")
    server.completions[0] = "hang"
    server.running.labels(**LABELS).set(2)
    server.tokens.labels(**LABELS).inc(100)
    assert probe(server, state, stall_seconds=1, idle_body=body) == 0  # known and busy: the count is recorded
    server.hidden.update(hidden)
    server.running.labels(**LABELS).set(0)
    assert probe(server, state, stall_seconds=1, idle_body=body) == 0
    time.sleep(1.2)
    assert probe(server, state, stall_seconds=1, idle_body=body) == 0
    assert server.received == []
    server.hidden.clear()
    server.running.labels(**LABELS).set(2)
    assert probe(server, state, stall_seconds=1, idle_body=body) == 0  # back, still 100 tokens: counted from now


def _probe_programs(kind: str) -> list[str]:
    """The Python of each vLLM stack's leader probes of ``kind`` that run a program (``python3 -c <code>``)."""
    return [
        shlex.split(probe["exec"]["command"][2].split("exec ", 1)[1])[2]
        for stack in VLLM_STACKS
        for probe, _, _ in _leader_probes(stack, kind)
        if "exec" in probe
    ]


@pytest.mark.parametrize("kind", ["livenessProbe", "readinessProbe"])
def test_progress_probes_read_series_the_pinned_wheel_exports(kind: str):
    """SRE review M3: the series the rendered probes read are metrics the vllm-tpu 0.29.0 wheel's v1 logger registers
    (tables/vllm-0.29.0.json ``metrics``): a gauge by its name, a counter by its ``_total`` samples. A name it does
    not register is absent from /metrics for good, and the probe would judge nothing."""
    from tpu_serving_tools.conformance.table import load as load_table

    metrics = load_table("vllm-0.29.0").metrics
    read = {name for code in _probe_programs(kind) for name in re.findall(r"total\('([^']+)'\)", code)}
    assert read == {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:generation_tokens_total"}
    kinds = {n: metrics.get(n) or f"{metrics.get(n.removesuffix('_total'))} (its _total)" for n in read}
    assert kinds == {
        "vllm:num_requests_running": "gauge",
        "vllm:num_requests_waiting": "gauge",
        "vllm:generation_tokens_total": "counter (its _total)",
    }


@pytest.mark.parametrize("kind", ["livenessProbe", "readinessProbe"])
def test_progress_probes_as_rendered_are_python_that_compiles(kind: str):
    """The probe programs of every vLLM stack parse as Python (the fast suite's guard; the slow tests run them)."""
    scripts = _probe_programs(kind)
    assert len(scripts) == 4
    for code in scripts:
        compile(code, kind, "exec")
