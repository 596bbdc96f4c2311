"""tpu_serving.backends.vllm.engine_settings: vLLM's ``extraArgs`` cannot change what the library derives nor carry
a secret, and no message repeats a refused secret (issue "A platform team adopts it", item 9): the same rules for a
stack file and a Python caller (MaxText's: tests/components/backends/test_jetstream.py)."""

from __future__ import annotations

import copy
import json

import pytest
from pydantic.alias_generators import to_camel

from tests.fixtures.configs import VLLM, load, stack_problems
from tpu_serving.backends.vllm import SecretKey, VllmEngineSettings
from tpu_serving.backends.vllm.args import extra_args_problem
from tpu_serving.common.validation import ArgumentsError, argument_problems, check_arguments

SECRET = "hf_SeCrEtVaLuE0123456789"


def vllm_with(**serving: object) -> dict:
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"].update(serving)
    return cfg


def python_problems(args: object, cls: type) -> list[str]:
    with pytest.raises(ArgumentsError) as err:
        check_arguments(cls.__name__, args, cls)
    return err.value.problems


def test_engine_flags_tuning_the_engine_is_left_to_the_user():
    flags = [
        "--enable-prefix-caching",
        "--max-num-seqs=256",
        "--max-num-batched-tokens=8192",
        "--long-prefill-token-threshold=512",
        "--enable-expert-parallel",
        "--max-parallel-loading-workers=2",
        "--ssl-keyfile=/etc/tls/key.pem",
    ]
    assert extra_args_problem(flags) == ""
    assert list(load(vllm_with(engine={"extraArgs": flags})).serving.engine.extra_args) == flags


@pytest.mark.parametrize(
    ("flag", "field"),
    [
        ("--tensor-parallel-size=32", "tensor_parallel_size"),
        ("--tensor-parallel=32", "tensor_parallel_size"),  # vllm serve keeps argparse's abbreviations
        ("--pipeline-parallel-size=2", "pipeline_parallel_size"),
        ("--max-model-len=131072", "max_model_len"),
        ("--gpu-memory-utilization=0.99", "memory_utilization"),
        ("--kv-cache-memory-bytes=20G", "memory_utilization"),
        ("--num-gpu-blocks-override=100000", "memory_utilization"),
        ("--dtype=float32", "dtype"),
        ("--quantization=fp8", "quantization"),
    ],
)
def test_engine_flags_a_flag_of_an_engine_setting_names_the_setting(flag, field):
    """The stack file names the setting as it spells it, a Python caller as Python does."""
    name = flag.split("=")[0]
    (problem,) = stack_problems(vllm_with(engine={"extraArgs": ["--enable-prefix-caching", flag]}))
    assert problem.startswith(f"tpu-serving:serving.engine.extraArgs: {name}: set by the component from the engine")
    assert f"({to_camel(field)}); set those instead" in problem
    (python,) = python_problems(VllmEngineSettings(extra_args=(flag,)), VllmEngineSettings)
    assert python.startswith(f"VllmEngineSettings.extra_args: {name}: set by the component from the engine")
    assert f"({field}); set those instead" in python


@pytest.mark.parametrize(
    "flag",
    [
        "--data-parallel-size=2",
        "--data-parallel-size-local=2",
        "--decode-context-parallel-size=2",
        "--prefill-context-parallel-size=2",
        "--nnodes=2",
        "--node-rank=1",
        "--headless",
    ],
)
def test_engine_flags_a_flag_that_changes_the_chips_an_engine_spans_is_refused(flag):
    name = flag.split("=")[0]
    (problem,) = stack_problems(vllm_with(engine={"extraArgs": [flag]}))
    assert problem.startswith(f"tpu-serving:serving.engine.extraArgs: {name}: would change the chips or hosts")
    assert "one engine per slice" in problem
    assert python_problems(VllmEngineSettings(extra_args=(flag,)), VllmEngineSettings)


def test_engine_flags_a_config_file_and_the_serving_flags_are_refused():
    (problem,) = stack_problems(vllm_with(engine={"extraArgs": ["--config=/model/serve.yaml", "--port=9000"]}))
    assert "--port: set by the component from the serving settings" in problem
    assert "--config: a config file may set any flag" in problem


@pytest.mark.parametrize(
    "args",
    [
        [f"--hf-token={SECRET}"],
        [f"--api-key={SECRET}"],
        ["--api-key", SECRET],
        [f"--API-KEY={SECRET}"],
        [f"--hf_token={SECRET}"],
    ],
    ids=["hf-token", "api-key", "api-key-value-apart", "upper-case", "underscore"],
)
def test_engine_flags_a_secret_is_refused_and_never_shown(args):
    (problem,) = stack_problems(vllm_with(engine={"extraArgs": args}))
    assert problem.startswith("tpu-serving:serving.engine.extraArgs: ")
    assert "a secret on the command line" in problem and "hfTokenSecret" in problem
    assert "the value is not shown" in problem
    assert SECRET not in problem
    (python,) = python_problems(VllmEngineSettings(extra_args=tuple(args)), VllmEngineSettings)
    assert "hf_token_secret" in python and SECRET not in python


def test_engine_flags_a_token_pasted_as_the_secrets_name_is_not_shown():
    cfg = vllm_with(loader="hugging-face", model="meta-llama/Llama-3.3-70B-Instruct", hfTokenSecret={"name": SECRET})
    (problem,) = [p for p in stack_problems(cfg) if "hfTokenSecret" in p]
    assert problem.startswith("tpu-serving:serving.hfTokenSecret.name: must match the regular expression")
    assert SECRET not in problem and "the value is not shown" in problem
    (python,) = python_problems(SecretKey(name=SECRET), SecretKey)
    assert python.startswith("SecretKey.name: must match the regular expression") and SECRET not in python


@pytest.mark.parametrize(
    ("args", "positions"),
    [
        ([SECRET], "[0]"),
        ([f"--hf-token {SECRET}"], "[0]"),
        (["-t", SECRET], "[0], [1]"),
        ([f"--api-key:{SECRET}"], "[0]"),
        (["--enable-prefix-caching", f"--data-parallel-size {SECRET}"], "[1]"),
        (["--max-num-seqs=8", "--hf-tok", SECRET], "[2]"),
        ([f"-{SECRET}"], "[0]"),
    ],
    ids=["bare-token", "flag-and-value-in-one", "short-flag", "colon", "parallel-with-a-space", "after-abbrev", "dash"],
)
def test_engine_flags_a_malformed_entry_is_named_by_its_position_only(args, positions):
    """An entry that is not `--flag` / `--flag=value` may be a token pasted as it is, or a flag and its value in one
    string: no message shows any part of it, only where it is in the list."""
    fragments = (SECRET, "SeCrEt", "VaLuE", "0123456789")
    (problem,) = stack_problems(vllm_with(engine={"extraArgs": args}))
    assert problem.startswith(f"tpu-serving:serving.engine.extraArgs: {positions}: each must be `--flag`")
    assert "the value is not shown" in problem
    assert not [f for f in fragments if f in problem], problem
    cases = {"python": python_problems(VllmEngineSettings(extra_args=tuple(args)), VllmEngineSettings)}
    cases["argument_problems"] = argument_problems(VllmEngineSettings(extra_args=tuple(args)))
    cases["extra_args_problem"] = [extra_args_problem(args)]
    for how, found in cases.items():
        assert found and not [f for f in fragments for p in found if f in p], (how, found)
    (python,) = cases["python"]
    assert python.startswith(f"VllmEngineSettings.extra_args: {positions}: each must be `--flag`")


@pytest.mark.parametrize(
    "args",
    [
        [f"--hf-tok={SECRET}"],
        [f"--api-k={SECRET}"],
        [f"--hf-t={SECRET}"],
        [f"--api={SECRET}"],
        ["--enable-prefix-caching", "--hf-toke", SECRET],
    ],
    ids=["hf-tok", "api-k", "hf-t", "api", "value-apart"],
)
def test_engine_flags_an_abbreviated_secret_flag_is_refused_and_never_shown(args):
    """`vllm serve` keeps argparse's abbreviations: `--hf-tok=...` is `--hf-token`, `--api-k=...` is `--api-key`."""
    name = next(a for a in args if a.startswith(("--hf-t", "--api"))).split("=")[0]
    (problem,) = stack_problems(vllm_with(engine={"extraArgs": args}))
    assert f"{name}: a secret on the command line" in problem and "hfTokenSecret" in problem
    assert SECRET not in problem and "SeCrEt" not in problem
    (python,) = python_problems(VllmEngineSettings(extra_args=tuple(args)), VllmEngineSettings)
    assert f"{name}: a secret on the command line" in python and SECRET not in python
    assert f"{name}: a secret on the command line" in extra_args_problem(args)


def test_engine_flags_the_secret_flags_are_those_of_the_pinned_release():
    """The secret flags the library declares are flags of vLLM 0.29.0 (its conformance table, read from the wheel),
    and every other flag of the release whose name holds token, key, secret or password was reviewed as carrying
    none: a release adding a secret flag fails here until facts.SECRET_FLAGS declares it."""
    from tpu_serving.backends.vllm.facts import SECRET_FLAGS
    from tpu_serving.catalog.versions import PINS
    from tpu_serving_tools.conformance.table import load as load_table

    assert PINS["vllm-tpu"].value.endswith(":v0.29.0")
    flags = load_table("vllm-0.29.0").flags
    assert {"--hf-token", "--api-key"} == SECRET_FLAGS
    assert not SECRET_FLAGS - flags, sorted(SECRET_FLAGS - flags)
    worded = {f for f in flags if any(w in f for w in ("token", "key", "secret", "passw"))}
    no_secret = {
        "--dbo-decode-token-threshold",
        "--dbo-prefill-token-threshold",
        "--enable-prompt-tokens-details",
        "--enable-tokenizer-info-endpoint",
        "--long-prefill-token-threshold",
        "--max-num-batched-tokens",
        "--max-num-queued-tokens",
        "--max-num-scheduled-tokens",
        "--return-tokens-as-token-ids",
        "--skip-tokenizer-init",
        "--spec-tokens",
        "--ssl-keyfile",
        "--tokenizer",
        "--tokenizer-mode",
        "--tokenizer-revision",
        "--tokens-only",
    }
    assert worded - SECRET_FLAGS == no_secret, sorted(worded - SECRET_FLAGS ^ no_secret)


STATS_OFF = (
    "tpu-serving:serving.engine.extraArgs: {name}: turns off vLLM's stat loggers and with them every vllm: metric "
    "(vllm:num_requests_running, vllm:num_requests_waiting, vllm:generation_tokens...), which the leaders' readiness "
    "and liveness, the autoscaler and the alerts read (the value is not shown: it may hold a secret)"
)


@pytest.mark.parametrize("flag", ["--disable-log-stats", "--disable-log-st", "--disable-log-stats=true"])
def test_engine_flags_a_flag_that_turns_off_the_engines_metrics_is_refused(flag):
    """SRE review M3: `--disable-log-stats` (vllm-tpu 0.29.0: no stat logger, the Prometheus one included) was
    accepted, even in the production example, and every vllm: series went: the probes read an absent gauge as an
    idle engine and sent it a completion, failing busy leaders. Refused, with its abbreviations, in every engine."""
    from tests.conftest import ROOT
    from tpu_serving_tools.preview.stack_files import load_project, stack_config

    name = flag.split("=")[0]
    cfg = dict(stack_config(load_project(ROOT), "vllm-llama33-70b-v6e8"))
    assert "tpu-serving:production" not in cfg  # the production example: production defaults to true
    serving = json.loads(cfg["tpu-serving:serving"])
    serving.setdefault("engine", {})["extraArgs"] = ["--enable-prefix-caching", flag]
    cfg["tpu-serving:serving"] = json.dumps(serving)
    assert stack_problems(cfg) == [STATS_OFF.format(name=name)]
    (python,) = python_problems(VllmEngineSettings(extra_args=(flag,)), VllmEngineSettings)
    assert python.startswith(f"VllmEngineSettings.extra_args: {name}: turns off vLLM's stat loggers")


def test_engine_flags_a_disaggregated_role_may_not_turn_off_the_metrics_either():
    from tests.components.backends.test_disagg import AT, problems_of

    found = problems_of(lambda d, _c: d["prefill"].update(engine={"extraArgs": ["--disable-log-stats"]}))
    assert f"{AT}.prefill.engine.extraArgs: --disable-log-stats: turns off vLLM's stat loggers" in " ".join(found)


def test_engine_flags_the_metrics_off_flags_are_the_pinned_releases():
    """The flag refused for turning off the engine's metrics is one of vLLM 0.29.0 (facts.STATS_OFF_FLAGS says why
    no other flag of the release does)."""
    from tpu_serving.backends.vllm.facts import STATS_OFF_FLAGS
    from tpu_serving_tools.conformance.table import load as load_table

    assert STATS_OFF_FLAGS == {"--disable-log-stats"} <= set(load_table("vllm-0.29.0").flags)
