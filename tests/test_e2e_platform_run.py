"""e2e.platform_run: a platform stack's e2e lifecycle is chosen by its stack file's ``sharedPlatform``."""

from tests.conftest import STACKS_ROOT
from tpu_serving_tools.e2e.platform_run import is_platform
from tpu_serving_tools.stack_files import load_project, stack_file_config


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
