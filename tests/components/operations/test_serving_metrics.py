"""tpu_serving.operations.serving_metrics: the second probe through a Gateway (library review 9, M1: the port a program gave
``through_gateway`` was the serving port, where the Gateway does not listen, and the CRITICAL page through the
Gateway fired on a healthy stack)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tpu_serving.common.validation import ArgumentsError
from tpu_serving.operations import serving_metrics
from tpu_serving.operations.prober import ProbeTarget
from tpu_serving.operations.serving_metrics import ServingMetrics, through_gateway
from tpu_serving.traffic.gateway import LISTENER_PORT


@dataclass
class _Gateway:
    address_name: str = "llm-gw"
    address: str = "10.0.0.9"
    gateway_name: str = "chat-gw"
    request_timeout_seconds: int = 600
    listener_port: int = LISTENER_PORT


PROBE = ProbeTarget("vllm", "vllm-api", 8000, "/v1/completions", "{}", "choices", "the engine")


def test_through_gateway_probes_the_gateways_listener(monkeypatch: pytest.MonkeyPatch):
    asked: list[tuple[object, int]] = []
    real = serving_metrics.prober.gateway_url

    def url(probe: ProbeTarget, address: object, port: int) -> object:
        asked.append((address, port))
        return real(probe, address, port)  # type: ignore[arg-type]

    monkeypatch.setattr(serving_metrics.prober, "gateway_url", url)
    metrics = through_gateway(ServingMetrics(probe=PROBE), _Gateway())
    assert asked == [("10.0.0.9", LISTENER_PORT)] and len(metrics.scrape) == 1
    assert metrics.gateway == "chat-gw" and metrics.gateway_probe == "llm-gw"


def test_through_gateway_refuses_a_port_the_gateway_does_not_listen_on():
    with pytest.raises(ArgumentsError, match=r"port = 8000: the Gateway chat-gw listens on 80"):
        through_gateway(ServingMetrics(probe=PROBE), _Gateway(), 8000)
    assert through_gateway(ServingMetrics(probe=PROBE), _Gateway(), LISTENER_PORT).scrape
