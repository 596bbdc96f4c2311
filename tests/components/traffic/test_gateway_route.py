"""gateway_route.attached_route: a model's HTTPRoute on the platform's Gateway takes only its models' requests."""

from tests.conftest import plan_of
from tpu_serving.traffic.gateway_route import MODEL_HEADER, _for_models

EVERY_PATH = [{"path": {"type": "PathPrefix", "value": "/"}}]


def test_for_models_requires_the_header_once_per_model_name():
    assert _for_models(EVERY_PATH, ("a", "b")) == [
        {"path": {"type": "PathPrefix", "value": "/"}, "headers": [{"type": "Exact", "name": MODEL_HEADER, "value": m}]}
        for m in ("a", "b")
    ]


def test_for_models_leaves_a_route_without_model_names_as_it_is():
    assert _for_models(EVERY_PATH, ()) == EVERY_PATH


def test_attached_route_of_the_8b_model_stack_takes_its_served_model_name():
    (route,) = plan_of("vllm-llama31-8b-platform").of_type("kubernetes:gateway.networking.k8s.io/v1:HTTPRoute")
    (rule,) = route.inputs["spec"]["rules"]
    assert [m["headers"] for m in rule["matches"]] == [
        [{"type": "Exact", "name": "X-Gateway-Model-Name", "value": "meta-llama/Llama-3.1-8B-Instruct"}]
    ]
