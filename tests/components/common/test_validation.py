"""Bound violations in the project's words (tpu_serving.common.validation.bound_message): the key path, the value and the
whole valid range, for the stack file's settings and the components' arguments alike; pydantic's own "Input should be
less than or equal to 0.98" named neither the range nor, for a stack file, anything but the bound broken."""

from __future__ import annotations

import copy
import re

import pulumi
import pytest

from tests.components.backends.test_vllm_args import _vllm_args
from tests.components.platform.test_cluster import cluster_args_for_test
from tests.conftest import ROOT
from tests.fixtures.components import _run_ps, run
from tests.fixtures.configs import VLLM, load
from tests.fixtures.pools import pool_args
from tpu_serving import TpuCluster, TpuNodePool
from tpu_serving.backends.vllm.args import VllmEngineSettings
from tpu_serving.common.validation import ArgumentsError, bound_message, check_arguments, empty_remedy
from tpu_serving.config import ConfigError
from tpu_serving.operations.autoscaling import AutoscalingSettings


def stack_problems(**engine: object) -> list[str]:
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"]["engine"] = engine
    cfg["tpu-serving:tpuSlices"][0]["count"] = 99
    with pytest.raises(ConfigError) as err:
        load(cfg)
    return err.value.problems


def argument_problems(cls: type, **fields: object) -> list[str]:
    with pytest.raises(ArgumentsError) as err:
        check_arguments(cls.__name__, fields, cls)
    return err.value.problems


def test_validation_stack_setting_out_of_bounds_names_its_range():
    problems = stack_problems(memoryUtilization=1.5)
    assert "tpu-serving:serving.engine.memoryUtilization = 1.5: must be from 0.1 to 0.98" in problems
    assert "tpu-serving:tpuSlices[0].count = 99: must be from 1 to 64" in problems  # a hand-written Field's bounds


def test_validation_component_argument_out_of_bounds_names_its_range():
    problems = argument_problems(VllmEngineSettings, memory_utilization=2.0)
    assert "VllmEngineSettings.memory_utilization = 2.0: must be from 0.1 to 0.98" in problems
    problems = argument_problems(AutoscalingSettings, target=-1, metric="?")
    assert "AutoscalingSettings.target = -1: must be greater than 0 and at most 100000" in problems
    assert "AutoscalingSettings.metric = '?': must match the regular expression ^[a-zA-Z_:][a-zA-Z0-9_:]*$" in problems


def test_validation_bound_message_without_the_fields_bounds_names_the_one_broken():
    error = {"type": "less_than_equal", "ctx": {"le": 0.98}}
    assert bound_message(error, {}) == "must be at most 0.98"
    assert bound_message({"type": "too_short", "ctx": {"min_length": 1}}, {}) == "must have at least 1 item"
    assert bound_message({"type": "string_too_long", "ctx": {"max_length": 63}}, {"min_length": 1}) == (
        "must have from 1 to 63 characters"
    )
    assert bound_message({"type": "missing"}, {}) == ""


def test_validation_no_recorded_message_is_pydantics_raw_bound():
    """Every message the suite creates (tests/golden_messages.txt, `make messages`) says a bound in these words."""
    # any "Input should be", pydantic's own head (issue 38, point 6: no raw pydantic wording reaches a user)
    raw = re.compile(r"Input should be |should have at (least|most) \d|String should match pattern")
    found = [line for line in (ROOT / "tests" / "golden_messages.txt").read_text().splitlines() if raw.search(line)]
    assert found == []


def test_validation_an_output_where_a_plain_value_is_taken_says_so():
    """Library review 6, m13: an Output passed to a plain string argument printed its object repr."""
    import pulumi

    from tpu_serving.common.validation import argument_problems
    from tpu_serving.tenancy.tenant import TenancyArgs

    problems = argument_problems(TenancyArgs(namespace=pulumi.Output.from_input("chat"), tpu_chips=8))
    assert problems == [
        "TenancyArgs.namespace is a pulumi Output: this argument takes a plain value, known when the program runs; "
        "pass the value itself, e.g. the name you gave the other component's arguments, not the Output of its resource"
    ]


def test_validation_serving_gateway_args_refuse_what_the_api_server_refuses():
    """Library review 7, M5: a gateway named 'Chat GW', port 70000 and a relative health path were accepted."""
    from tpu_serving.common.validation import argument_problems
    from tpu_serving.traffic.gateway import ServingGatewayArgs

    args = dict(
        project="p-123456", region="us-east5", network="default", namespace="chat", address_name="a", subnetwork="s"
    )
    bad = ServingGatewayArgs(**args, name="Chat GW", service="vllm api", port=70000, health_path="health")
    assert argument_problems(bad) == [
        "ServingGatewayArgs.name = 'Chat GW': must consist of lower-case letters, digits and '-', start with a letter "
        "and end with a letter or digit",
        "ServingGatewayArgs.service = 'vllm api': must consist of lower-case letters, digits and '-', start with a "
        "letter and end with a letter or digit",
        "ServingGatewayArgs.port = 70000: must be from 1 to 65535",
        "ServingGatewayArgs.health_path = 'health': must be an absolute path such as /health",
    ]
    long = ServingGatewayArgs(**args, name="g" * 60, service="vllm-api", port=8000, health_path="/health")
    (problem,) = argument_problems(long)
    assert problem.endswith(f": must be at most 59 characters: its endpoint picker is {'g' * 60}-epp, a label value")
    good = ServingGatewayArgs(**args, name="chat-gw", service="vllm-api", port=8000, health_path="/health")
    assert argument_problems(good) == []
    # GKE review round 68, m1: GKE cuts the URL map's name to 63 characters, and the Gateway alerts match it whole
    cut = dict(args, namespace="llama-3-3-70b-instruct-production")
    (problem,) = argument_problems(ServingGatewayArgs(**cut, name="chat-gw", service="v", port=8000, health_path="/h"))
    assert problem.startswith(
        "ServingGatewayArgs.name = 'chat-gw' in namespace 'llama-3-3-70b-instruct-production': GKE names the Gateway's "
        "URL map gkegw1-<4>-llama-3-3-70b-instruct-production-chat-gw-<12>, 66 characters"
    )


def test_validation_the_default_namespace_is_refused_as_a_servings_own():
    """New-user review 16, M1; library review 7, m1: namespace 'default' passed every check, and the first pulumi up
    would fail on creating the Namespace every cluster has."""
    from tpu_serving.common.naming import namespace_problem
    from tpu_serving.common.validation import argument_problems
    from tpu_serving.tenancy.tenant import TenancyArgs

    assert namespace_problem("default").startswith("'default' is every cluster's own namespace")
    (problem,) = argument_problems(TenancyArgs(namespace="default", tpu_chips=8))
    assert problem.startswith("TenancyArgs.namespace = 'default': 'default' is every cluster's own namespace"), problem
    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:workloadIdentity": {**VLLM["tpu-serving:workloadIdentity"], "namespace": "default"}})
    assert "workloadIdentity.namespace" in str(err.value) and "every cluster's own namespace" in str(err.value)


def test_validation_one_string_where_a_list_is_taken_says_how_to_write_the_list():
    """New-user review 16, m2: a single CIDR without brackets got pydantic's own wording."""
    cluster = {**VLLM["tpu-serving:cluster"], "masterAuthorizedNetworks": "203.0.113.0/24"}
    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:cluster": cluster})
    said = str(err.value)
    assert "must be a sequence (a list or a tuple), not a string: write [203.0.113.0/24]" in said, said
    assert "instances are not allowed" not in said


def test_validation_reported_drops_a_length_refused_after_its_item_was() -> None:
    """New-user review of the capacity fallback, m1: ``fallback = ['queued']`` also read "must have at least 1 item",
    pydantic's count of the valid items; a length refused with no item refused still is."""
    from tpu_serving.common.validation import reported

    item = {"type": "enum", "loc": ("fallback", 0)}
    length = {"type": "too_short", "loc": ("fallback",)}
    other = {"type": "too_short", "loc": ("pools",)}
    assert reported([item, length, other]) == [item, other]
    assert reported([length]) == [length]


def test_validation_a_short_list_refused_is_shown_beside_its_key() -> None:
    """New-user review of the capacity fallback, m3: ``serving.fallback: []`` read "serving.fallback: must have at least
    1 item", without the value given; a list is shown as a scalar is, a mapping still is not."""
    serving = {**VLLM["tpu-serving:serving"], "fallback": []}
    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:serving": serving})
    assert "tpu-serving:serving.fallback = []: must have at least 1 item" in str(err.value), str(err.value)


def test_empty_remedy_names_the_choices_and_that_an_optional_setting_may_be_left_out() -> None:
    """New-user review of the capacity fallback, m2: ``serving.fallback: []`` named no remedy."""
    serving = {**VLLM["tpu-serving:serving"], "fallback": []}
    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:serving": serving})
    said = "at least 1 item: one or more of 'on-demand', 'flex-start' or 'spot'; or leave it out, for none"
    assert said in str(err.value), str(err.value)


def test_empty_remedy_says_nothing_of_a_list_given_items_nor_of_another_error() -> None:
    from tpu_serving.pools.compute_class import Fallback

    short = {"type": "too_short", "input": ["spot"]}
    assert empty_remedy(short, list[Fallback], True) == ""
    assert empty_remedy({"type": "too_long", "input": []}, list[Fallback], True) == ""
    assert empty_remedy({"type": "too_short", "input": []}, list[str], False) == ""
    assert empty_remedy({"type": "too_short", "input": []}, list[str], True) == "; or leave it out, for none"


def test_validation_long_values_are_cut_at_sixty_characters():
    """validation._shown: a value's repr over 60 characters is cut to 57 and ``...``."""
    from tpu_serving.common.validation import _shown

    assert _shown("x" * 58) == repr("x" * 58)  # 60 characters with the quotes
    assert _shown("x" * 59) == repr("x" * 59)[:57] + "..."


def test_validation_declared_checks_hold_for_python_arguments():
    """validation._dataclass (mutmut_16): a field's declared ``check`` runs on a component's arguments too
    (here the vLLM engine's extra arguments, as the stack file's serving.engine.extraArgs)."""
    import dataclasses

    from tpu_serving.backends.vllm.args import VllmEngineSettings, VllmServingArgs
    from tpu_serving.common.validation import ArgumentsError, check_arguments

    args = _vllm_args()
    check_arguments("VllmServing", args, VllmServingArgs)
    bad = dataclasses.replace(args, engine=VllmEngineSettings(extra_args=("-x",)))
    with pytest.raises(ArgumentsError) as err:
        check_arguments("VllmServing", bad, VllmServingArgs)
    assert "engine.extra_args: [0]: each must be `--flag`" in str(err.value) and "-x" not in str(err.value)


# Components check their own arguments (check_arguments, ArgumentsError): each run alone under the recording
# monitor (mocks).


def test_validation_check_their_own_arguments_and_report_every_problem():
    from tpu_serving.common.validation import ArgumentsError

    def program():
        TpuNodePool("tpu", pool_args(pool_names="c-a-pool", spot="yes", service_account_id="x", disk_size_gb=10))

    with pytest.raises(ArgumentsError) as exc:
        run(program)
    problems = exc.value.problems
    # In field order: the field, the value given and what it must be.
    assert len(problems) == 4
    assert problems[0].startswith("TpuNodePoolArgs.service_account_id = 'x': must be 6 to 30")
    assert problems[1] == (
        "TpuNodePoolArgs.pool_names = 'c-a-pool': must be a sequence (a list or a tuple), not a string"
    )
    assert problems[2] == "TpuNodePoolArgs.spot = 'yes': must be true or false"
    assert problems[3] == "TpuNodePoolArgs.disk_size_gb = 10: must be from 50 to 4000"
    assert isinstance(exc.value, pulumi.RunError)  # the engine prints it without a traceback


def test_validation_check_nested_arguments():
    from tpu_serving.common.validation import ArgumentsError
    from tpu_serving.platform.cluster import CpuPoolArgs

    with pytest.raises(ArgumentsError) as exc:
        run(lambda: TpuCluster("c", cluster_args_for_test(cpu_pool=CpuPoolArgs(min_nodes=4, max_nodes=2))))
    assert exc.value.problems == ["TpuClusterArgs.cpu_pool.min_nodes (4) must not exceed max_nodes (2)"]


def test_validation_check_the_bounds_declared_with_the_setting():
    from tpu_serving.common.validation import ArgumentsError
    from tpu_serving.config import CpuPoolConfig
    from tpu_serving.platform.cluster import CpuPoolArgs

    with pytest.raises(ArgumentsError) as exc:
        run(lambda: TpuCluster("c", cluster_args_for_test(cpu_pool=CpuPoolArgs(disk_size_gb=10, max_nodes=101))))
    assert exc.value.problems == [
        "TpuClusterArgs.cpu_pool.max_nodes = 101: must be from 1 to 100",
        "TpuClusterArgs.cpu_pool.disk_size_gb = 10: must be from 30 to 2000",
    ]
    # The stack file's cluster.cpuPool is the same declaration: same defaults, bounds and descriptions.
    field = CpuPoolConfig.model_fields["disk_size_gb"]
    assert (field.default, field.description) == (100, "Boot disk size of each CPU node, in GB.")
    assert CpuPoolConfig().model_dump() == vars(CpuPoolArgs())


def test_validation_accept_outputs_as_wiring():
    def program():
        cluster = TpuCluster("c", cluster_args_for_test())
        TpuNodePool("tpu", pool_args(cluster=cluster.cluster.id))

    assert run(program).of_type("gcp:container/nodePool:NodePool")


@pytest.mark.parametrize("component", ["Buckets", "ServingAutoscaler"])
def test_validation_name_themselves_in_their_refusals(component):
    """buckets.Buckets.__init__ (mutmut_9), autoscaling.ServingAutoscaler.__init__ (mutmut_10): the refusal names
    the component as Python spells it."""
    import tpu_serving
    from tpu_serving.common.validation import ArgumentsError

    with pytest.raises(ArgumentsError) as err:
        _run_ps(lambda: getattr(tpu_serving, component)("x", {"no_such_argument": 1}))
    assert str(err.value).startswith(f"invalid arguments of {component} 'x': ")  # and its resource name


def test_validation_one_problem_is_one_problem():
    """validation.ArgumentsError.__init__ (mutmut_6): "1 problem", not "1 problems"."""
    from tpu_serving.common.validation import ArgumentsError

    assert str(ArgumentsError("C", ["a"])).splitlines()[0] == "invalid arguments of C: 1 problem"
    assert str(ArgumentsError("C", ["a", "b"])).splitlines()[0] == "invalid arguments of C: 2 problems"
