"""``VllmServing.neighbours``: what Tenancy, Observability and ServingAutoscaler need of a vLLM serving, read off its
arguments, is what a stack file's deployment gives them from its settings (library review 2, M7: a program of its
own had to write the labels, ports, metrics and pod sets by hand)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import STACKS_ROOT
from tpu_serving import AutoscalingSettings, VllmServing
from tpu_serving.operations.autoscaling import ServingAutoscaler
from tpu_serving.operations.observability import Observability
from tpu_serving.tenancy.tenant import Tenancy
from tpu_serving.traffic.gateway import ServingGateway
from tpu_serving_tools.preview.offline import preview_stack


def _captured(monkeypatch: pytest.MonkeyPatch, stack: str) -> dict[str, list[Any]]:
    """The stack's preview, with the arguments each of the four components was built with (and the serving itself)."""
    seen: dict[str, list[Any]] = {
        "serving": [],
        "Tenancy": [],
        "Observability": [],
        "ServingAutoscaler": [],
        "hpa": [],
        "ServingGateway": [],
    }

    def wrap(cls: type, key: str) -> None:
        original = cls.__init__

        def init(self: Any, name: str, args: Any, *rest: Any, **kw: Any) -> None:
            seen[key].append(self if key == "serving" else args)
            original(self, name, args, *rest, **kw)
            if key == "ServingAutoscaler":
                seen["hpa"].append(self)

        monkeypatch.setattr(cls, "__init__", init)

    wrap(VllmServing, "serving")
    for cls in (Tenancy, Observability, ServingAutoscaler, ServingGateway):
        wrap(cls, cls.__name__)
    preview_stack(STACKS_ROOT, stack)
    return seen


@pytest.mark.parametrize("stack", ["vllm-llama33-70b-v6e8", "vllm-llama31-405b-v6e16"])
def test_vllm_neighbours_are_what_the_stack_gives_the_components_beside_it(
    monkeypatch: pytest.MonkeyPatch, stack: str
) -> None:
    seen = _captured(monkeypatch, stack)
    (server,), (tenancy,), (observability,) = seen["serving"], seen["Tenancy"], seen["Observability"]
    autoscaling: AutoscalingSettings | None = (
        seen["ServingAutoscaler"][0].settings if seen["ServingAutoscaler"] else None
    )
    n = server.neighbours(autoscaling)
    assert dict(tenancy.serving_pods) == dict(n.serving_pods) and n.serving_pods
    assert tuple(tenancy.serving_ports) == n.serving_ports
    # the stack scrapes its endpoint picker too, which is not the serving's; the serving probe is (library review 7, M1)
    assert [t for t in tenancy.scrape_targets if not t.name.endswith("-epp")] == list(n.metrics.scrape)
    assert [t.name for t in n.metrics.scrape] == ["vllm-leaders", "vllm-api-prober"]
    assert tenancy.tpu_headroom_chips == n.restart_unit_chips
    serving_pods = tuple(
        p for p in tenancy.pods if p.name.startswith(("LeaderWorkerSet ", "Deployment of the serving probe"))
    )
    assert serving_pods == n.pod_sets and len(n.pod_sets) == 2
    m = observability.metrics
    said = (
        [t for t in m.scrape if not t.name.endswith(("-epp", "-gateway"))],
        m.probe,
        m.signals,
        m.leader_worker_sets,
        m.http_responses,
        m.fewest_groups,
        tuple(m.autoscalers),
    )
    assert said == (
        n.metrics.scrape,
        n.metrics.probe,
        n.metrics.signals,
        n.metrics.leader_worker_sets,
        n.metrics.http_responses,
        n.metrics.fewest_groups,
        tuple(n.metrics.autoscalers),
    )
    # library review 7, M3: the Gateway's backend, which a program wrote by hand
    for gateway in seen["ServingGateway"]:
        assert (gateway.service, gateway.port, gateway.health_path) == (n.service, n.port, n.health_path)
    assert seen["ServingGateway"]
    if autoscaling is not None:
        assert seen["ServingAutoscaler"][0].metric == n.autoscaling_metric
        # the name the host-maintenance gate is given (library review 4, M1): the HPA is named after its target
        assert seen["hpa"][0].hpa_name == seen["ServingAutoscaler"][0].target == n.metrics.leader_worker_sets[0]
    assert (autoscaling is not None) == (stack == "vllm-llama33-70b-v6e8")  # both ways are held


def test_vllm_neighbours_validates_its_arguments_as_the_components_do():
    """Library review 9, m1: ``neighbours(args)`` (the way to build Tenancy before the serving exists) read unvalidated
    arguments: a slice name for ``shape`` raised ``AttributeError``; a string ``replicas`` reached Tenancy's pods."""
    import dataclasses

    from tpu_serving import VllmServingArgs, catalog
    from tpu_serving.backends.vllm.neighbours import neighbours
    from tpu_serving.common.validation import ArgumentsError

    shape = catalog.slice_shape("ct6e-standard-8t", "2x4")
    args = VllmServingArgs("serving", "server", shape, "llama", "meta-llama/Llama-3.3-70B-Instruct", weights_bucket="w")
    assert neighbours(args).serving_ports
    for field, value in (("shape", "v6e-8"), ("replicas", "2")):
        with pytest.raises(ArgumentsError) as err:
            neighbours(dataclasses.replace(args, **{field: value}))
        assert f"VllmServingArgs.{field} = " in str(err.value), str(err.value)
    with pytest.raises(ArgumentsError) as err:
        neighbours(args, AutoscalingSettings(max_replicas=2, min_replicas=3))
    assert "AutoscalingSettings" in str(err.value), str(err.value)
