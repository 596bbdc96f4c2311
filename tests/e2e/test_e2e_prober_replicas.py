"""The serving probe's alerts over the prober's two replicas (:data:`tpu_serving.operations.prober.PROBER_REPLICAS`), run by
Prometheus' ``promtool`` as :mod:`tests.e2e.test_e2e_alerts` runs every alert: a replica that is down (its series stop,
as when its node or zone is lost) must neither page nor silence the probe alerts, a hung group of two must still show
in part, and both replicas down must show as the probe missing. Marked ``e2e`` (it needs the toolchain's binary)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import plan_of
from tests.e2e.test_e2e_alerts import (
    HEALTHY_MINUTES,
    SLACK_MINUTES,
    Alert,
    _firing,
    alerts,
    promtool,
    run_promtool,
    short,
)
from tpu_serving.operations.prober import PROBER_REPLICAS

pytestmark = pytest.mark.e2e

STACK = "vllm-llama33-70b-v5e16"
KEYS = ("probe-failing", "probe-failing-part", "probe-missing")
MINUTES = 90
LATE = HEALTHY_MINUTES + 15 + SLACK_MINUTES
"""Past every probe alert's window and duration (15 minutes at most, the failing-in-part window) after the change."""
SERIES = re.compile(r"probe_success(\{[^}]*\})")

CASES: dict[str, tuple[tuple[str, str], dict[str, int]]] = {
    # one replica's series stop after the healthy quarter (its node or zone lost); the other probes on
    "one replica down": ((f"1x{MINUTES}", f"1x{HEALTHY_MINUTES} _x{MINUTES - HEALTHY_MINUTES}"), {}),
    # one group of two hung: kube-proxy sends each replica's probes to it about half the time (out of phase here, so
    # some replica's last probe always succeeded)
    "a hung group of two": (
        (f"1x{HEALTHY_MINUTES} 1 0" + " 1 0" * 37, f"1x{HEALTHY_MINUTES} 0 1" + " 0 1" * 37),
        {"probe-failing-part": 1},
    ),
    # one group of eight hung: over each quarter of an hour one replica's probes met it three times, the other's once;
    # 4 failures of the 30 probes pooled (0.87), though one replica alone saw 14 of 15 succeed (0.93)
    "a hung group of eight": (
        (f"1x{HEALTHY_MINUTES} " + " ".join(["0x2 1x11"] * 5), f"1x{HEALTHY_MINUTES} " + " ".join(["0 1x13"] * 5)),
        {"probe-failing-part": 1},
    ),
    # every probe of both replicas fails: the stack serves nothing
    "nothing served": (
        (f"1x{HEALTHY_MINUTES} 0x{MINUTES - HEALTHY_MINUTES}",) * 2,
        {"probe-failing": 1, "probe-failing-part": 1},
    ),
    # both replicas down: nothing probes
    "both replicas down": ((f"1x{HEALTHY_MINUTES} _x{MINUTES - HEALTHY_MINUTES}",) * 2, {"probe-missing": 1}),
}
"""Each case: the two replicas' ``probe_success`` (promtool's expanding notation, ``_`` no sample) and the alerts
that must fire (every other probe alert must stay quiet)."""


def _probe_alerts() -> list[Alert]:
    found = [a for a in alerts(plan_of(STACK))[0] if short(a.name) in KEYS]
    assert sorted(short(a.name) for a in found) == sorted(KEYS)
    return found


@pytest.mark.parametrize("case", CASES)
def test_probe_alerts_over_two_prober_replicas(case: str, tmp_path: Path) -> None:
    binary = promtool()
    assert PROBER_REPLICAS == 2
    probe = _probe_alerts()
    (selector,) = {m for a in probe for m in SERIES.findall(a.query)}
    values, firing = CASES[case]
    series = [
        {"series": "probe_success" + selector.replace("}", f', pod="vllm-api-prober-7c9d8b6f5d-{pod}"}}'), "values": v}
        for pod, v in zip(("a1b2c", "d3e4f"), values, strict=True)
    ]
    rules = [{"alert": a.name, "expr": a.query, "for": f"{a.duration}s"} for a in probe]
    (tmp_path / "rules.yaml").write_text(
        yaml.safe_dump({"groups": [{"name": STACK, "interval": "60s", "rules": rules}]})
    )
    checks = [_firing(a, LATE, firing.get(short(a.name), 0)) for a in probe]
    checks += [_firing(a, HEALTHY_MINUTES - 1, 0) for a in probe]
    tests = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [{"name": case, "interval": "1m", "input_series": series, "promql_expr_test": checks}],
    }
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    result = run_promtool(binary, ["test", "rules", "tests.yaml"], tmp_path)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
