"""e2e.platform_run: a platform stack's e2e lifecycle is chosen by its stack file's ``sharedPlatform``."""

from tests.conftest import STACKS_ROOT
from tpu_serving_tools.e2e.platform_run import is_platform
from tpu_serving_tools.preview.stack_files import load_project, stack_file_config


def test_is_platform_tells_the_platform_stack_from_its_model_stacks():
    project = load_project(STACKS_ROOT)
    assert is_platform(stack_file_config(project, "platform-us-east5"))
    assert not is_platform(stack_file_config(project, "vllm-llama31-8b-platform"))
    assert not is_platform(stack_file_config(project, "llama31-405b-v6e16"))
    assert is_platform({"tpu-serving:sharedPlatform": {}})


def test_with_pods_judges_pods_only_where_the_platform_declares_a_workload():
    from tpu_serving_tools.e2e.platform_run import with_pods
    from tpu_serving_tools.verify.expect import Expectations

    declared = [
        ("apps/v1", "Deployment", "lws-system", "lws-controller-manager"),
        ("gateway.networking.k8s.io/v1", "Gateway", "tpu-serving-gateway", "internal"),
        ("v1", "Namespace", None, "tpu-serving-gateway"),
    ]
    expect = Expectations(declared, ["lws-system", "tpu-serving-gateway"], {}, False)
    judged = with_pods(expect)
    assert judged.namespaces == ["lws-system"]
    assert judged.declared == declared  # every object is still checked to exist


CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
PROVIDER = "pulumi:providers:gcp"


def _state(protect: bool = True) -> list[dict[str, object]]:
    return [
        {"urn": "urn:pulumi:s::p::x$" + CRD + "::leaderworkersets", "type": CRD, "protect": protect},
        {"urn": "urn:pulumi:s::p::x$" + GATEWAY + "::internal", "type": GATEWAY, "protect": protect},
        {"urn": "urn:pulumi:s::p::" + PROVIDER + "::default", "type": PROVIDER},
        {"urn": "urn:pulumi:s::p::tpu-serving:index:PlatformAlerts::tpu-platform-alerts", "type": "alerts"},
    ]


class _Run:
    """A StackRun whose destroy fails as the engine's does, leaving ``left`` of the state."""

    def __init__(self, left: list[dict[str, object]], error: str | None = "error: resource is protected") -> None:
        self.left, self.error = left, error

    def destroy(self) -> None:
        if self.error is not None:
            raise RuntimeError(self.error)

    def resources(self) -> list[dict[str, object]]:
        return self.left


def _judged(run: _Run, state: list[dict[str, object]]) -> dict[str, bool]:
    from tpu_serving_tools.e2e.platform_run import refused_destroy

    return {f.subject: f.ok for f in refused_destroy(run, state)}  # type: ignore[arg-type]


def test_refused_destroy_passes_when_the_engine_refuses_and_deletes_only_a_default_provider():
    state = _state()
    assert _judged(_Run(state[:2] + state[3:]), state) == {"protected in state": True, "pulumi destroy refused": True}


def test_refused_destroy_fails_when_the_refused_destroy_deleted_a_resource():
    state = _state()
    assert not _judged(_Run(state[:3]), state)["pulumi destroy refused"]


def test_refused_destroy_fails_when_the_destroy_succeeds_or_fails_for_another_reason():
    state = _state()
    assert not _judged(_Run([], error=None), state)["pulumi destroy refused"]
    assert not _judged(_Run(state, error="error: the cluster is unreachable"), state)["pulumi destroy refused"]


def test_refused_destroy_fails_when_the_state_protects_no_crd_or_gateway():
    state = _state(protect=False)
    assert not _judged(_Run(state), state)["protected in state"]
    no_gateway = [r for r in _state() if r["type"] != GATEWAY]
    assert not _judged(_Run(no_gateway), no_gateway)["protected in state"]


def test_refused_destroy_fails_when_one_crd_of_several_is_unprotected():
    state = _state()
    state.append({"urn": "urn:pulumi:s::p::x$" + CRD + "::jobsets", "type": CRD, "protect": False})
    assert not _judged(_Run(state), state)["protected in state"]
