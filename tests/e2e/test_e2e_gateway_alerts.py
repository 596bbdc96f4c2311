"""The Gateway's load-balancer alerts (:mod:`tpu_serving.operations.alerts.gateway_alerts`) of the production example's plan, run by
Prometheus' ``promtool`` (the e2e toolchain's) on load-balancer series of their own: Cloud Monitoring's
``loadbalancing.googleapis.com/https/internal/request_count`` has no exporter to take series from, so the inputs
model it as a counter per response class on the URL map GKE names ``gkegw1-<4>-<namespace>-<gateway>-<hash>``. What
this shows: the queries' logic (the share, the traffic guard, the URL map's selection, the absence while the
Gateway probe succeeds). What not: Cloud Monitoring's own evaluation of a DELTA metric, nor GKE's real URL map name.
Marked ``e2e``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import plan_of
from tests.e2e.test_e2e_alerts import ALERT_POLICY, promtool, run_promtool
from tpu_serving.operations.alerts.gateway_alerts import METRIC, url_map_pattern

pytestmark = pytest.mark.e2e

STACK = "vllm-llama33-70b-v6e8"
OURS = "gkegw1-ab12-vllm-llama70b-vllm-api-gateway-x7k2p9q3m1za"
OTHER = "gkegw1-cd34-other-team-chat-gateway-q1w2e3r4t5y6"
PROBE = 'probe_success{cluster="vllm70bv6e", namespace="vllm-llama70b", job="vllm-api-prober-gateway"}'


def test_url_map_pattern_matches_the_names_gke_gives_and_not_another_gateways() -> None:
    """The two forms seen on live Gateways' networking.gke.io/url-maps annotations (gkegw1- and the older gkegw-)."""
    assert re.fullmatch(
        url_map_pattern("exercises", "log-ping-app-gateway"), "gkegw1-nv9e-exercises-log-ping-app-gateway-z33kukono48t"
    )
    assert re.fullmatch(
        url_map_pattern("istio-system", "internal-http"), "gkegw-lql5-istio-system-internal-http-0rf972gnatfu"
    )
    assert not re.fullmatch(url_map_pattern("vllm-llama70b", "vllm-api-gateway"), OTHER)
    assert not re.fullmatch(url_map_pattern("vllm", "api-gateway"), OURS)  # fmt: skip


def _queries() -> dict[str, tuple[str, int]]:
    found = {}
    for res in plan_of(STACK).of_type(ALERT_POLICY):
        if res.name.endswith(("-gateway-errors", "-gateway-errors-unread", "-gateway-near-timeout")):
            promql = res.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]
            found[res.name.rsplit("observability-", 1)[1]] = (promql["query"], int(promql["duration"].rstrip("s")))
    return found


def _lb(url_map: str, code_class: str, per_minute: int, minutes: int) -> dict[str, str]:
    labels = f'monitored_resource="internal_http_lb_rule", url_map_name="{url_map}", response_code_class="{code_class}"'
    return {"series": f"{METRIC}{{{labels}}}", "values": f"0+{per_minute}x{minutes}"}


LATENCY_BUCKETS_MS = ("1000", "10000", "60000", "120000", "240000", "280000", "320000", "+Inf")
"""Bucket bounds of the modelled latency distribution (Cloud Monitoring's own are exponential: the query reads any)."""


def _latencies(url_map: str, quick: int, slow: int, minutes: int = 60) -> list[dict[str, str]]:
    """A minute's ``quick`` requests at 60 s and ``slow`` ones at 300 s (the timeout), as cumulative buckets."""
    out = []
    for le in LATENCY_BUCKETS_MS:
        bound = float("inf") if le == "+Inf" else float(le)
        per_minute = (quick if bound >= 60000 else 0) + (slow if bound >= 300000 else 0)
        labels = f'monitored_resource="internal_http_lb_rule", url_map_name="{url_map}", le="{le}"'
        name = "loadbalancing_googleapis_com:https_internal_total_latencies_bucket"
        out.append({"series": f"{name}{{{labels}}}", "values": f"0+{per_minute}x{minutes}"})
    return out


def _case(name: str, series: list[dict[str, str]], alert: str, at: int, firing: int) -> dict[str, Any]:
    expr = f'clamp_max(count(ALERTS{{alertname="{alert}", alertstate="firing"}}), 1) or vector(0)'
    check = {"expr": expr, "eval_time": f"{at}m", "exp_samples": [{"labels": "{}", "value": firing}]}
    return {"name": name, "interval": "1m", "input_series": series, "promql_expr_test": [check]}


def test_gateway_alerts_fire_on_the_load_balancers_errors_and_on_their_absence(tmp_path: Path) -> None:
    binary = promtool()
    queries = _queries()
    assert sorted(queries) == ["gateway-errors", "gateway-errors-unread", "gateway-near-timeout"], sorted(queries)
    rules = [{"alert": k, "expr": q, "for": f"{d}s"} for k, (q, d) in queries.items()]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": [{"name": "gateway", "rules": rules}]}))
    check = run_promtool(binary, ["check", "rules", "rules.yaml"], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    minutes = 60
    probe = {"series": PROBE, "values": f"1x{minutes}"}
    fire = queries["gateway-errors"][1] // 60 + 8
    tests = [
        # 600 requests a minute, 90 of them 5xx (15%): fires; 6 of them (1%): quiet
        _case("errors", [_lb(OURS, "200", 510, minutes), _lb(OURS, "500", 90, minutes)], "gateway-errors", fire, 1),
        _case("few errors", [_lb(OURS, "200", 594, minutes), _lb(OURS, "500", 6, minutes)], "gateway-errors", fire, 0),
        # every error on another Gateway's URL map: not ours
        _case("other gateway", [_lb(OURS, "200", 600, minutes), _lb(OTHER, "500", 600, minutes)], "gateway-errors", fire, 0),
        # idle: the probe's 2 a minute, one of them failing (half the traffic): below the traffic guard (SRE 18, m1)
        _case("idle", [_lb(OURS, "200", 1, minutes), _lb(OURS, "500", 1, minutes)], "gateway-errors", fire, 0),
        _case("busy", [_lb(OURS, "200", 4, minutes), _lb(OURS, "500", 2, minutes)], "gateway-errors", fire, 1),
        # the probe succeeds, no series of the URL map: the pattern reads nothing
        _case("unread", [probe, _lb(OTHER, "200", 60, minutes)], "gateway-errors-unread", 45, 1),
        _case("read", [probe, _lb(OURS, "200", 60, minutes)], "gateway-errors-unread", 45, 0),
        # 100 requests a minute, 3 of them running to the 300 s timeout (a streamed cut keeps its 200): fires;
        # 3 of them at 60 s: quiet; the same on another Gateway's URL map: quiet
        _case("near", _latencies(OURS, 97, 3), "gateway-near-timeout", 40, 1),
        _case("short", _latencies(OURS, 100, 0), "gateway-near-timeout", 40, 0),
        _case("near, other gateway", _latencies(OTHER, 97, 3), "gateway-near-timeout", 40, 0),
    ]  # fmt: skip
    (tmp_path / "tests.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests})
    )
    result = run_promtool(binary, ["test", "rules", "tests.yaml"], tmp_path)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
