"""tpu_serving.deployment: TpuServingDeployment, the component a stack file's program builds."""

from __future__ import annotations

from tests.conftest import ROOT
from tests.fixtures.configs import VLLM, as_engine_config
from tpu_serving_tools.preview.offline import run_program
from tpu_serving_tools.preview.stack_files import load_project


def test_deployment_exposes_its_controller_installs():
    """deployment.TpuServingDeployment.__init__ (mutmut_89): `installs` holds the controllers the stack installs."""
    from tpu_serving import TpuServingDeployment, TpuServingDeploymentArgs
    from tpu_serving.config.loading import load_stack_config

    built = []
    project = load_project(ROOT)

    def program():
        settings = load_stack_config(as_engine_config(VLLM))
        built.append(TpuServingDeployment("d", TpuServingDeploymentArgs(settings)))

    plan = run_program(program, as_engine_config(VLLM), project=project.name, stack="s")
    (deployment,) = built
    installs = [r.name for r in plan.resources if r.type == "tpu-serving:index:ControllerInstall"]
    assert installs == ["d-lws"], installs
    assert [(type(i).__name__, i._name) for i in deployment.installs] == [("ControllerInstall", "d-lws")]
