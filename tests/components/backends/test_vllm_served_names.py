"""``servedModelAliases`` (VllmServingArgs.served_model_aliases): further names vLLM answers to, so that the served
model can be renamed without a rollout that answers each name from only part of the groups (SRE review 32, M1)."""

from __future__ import annotations

import shlex

import pytest

from tests.fixtures.configs import VLLM, load, plan_of_config, with_change
from tpu_serving.config import ConfigError


def serve_words(aliases: list[str] | None) -> list[str]:
    data = VLLM if aliases is None else with_change("tpu-serving:serving/servedModelAliases", aliases, VLLM)
    (lws,) = [r for r in plan_of_config(data).resources if r.inputs.get("kind") == "LeaderWorkerSet"]
    leader = lws.inputs["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    script = " ".join(leader.get("args") or leader.get("command") or [])
    return shlex.split(script.split("vllm serve", 1)[1].split("&&", 1)[0])


def test_served_names_alone_keep_the_one_word_flag():
    words = serve_words(None)
    name = VLLM["tpu-serving:serving"]["servedModelName"]
    assert f"--served-model-name={name}" in words


def test_served_names_with_aliases_pass_every_name_after_the_flag():
    words = serve_words(["llama-70b", "llama-latest"])
    i = words.index("--served-model-name")
    name = VLLM["tpu-serving:serving"]["servedModelName"]
    assert words[i + 1 : i + 4] == [name, "llama-70b", "llama-latest"]
    assert words[i + 4].startswith("--")


@pytest.mark.parametrize(
    ("aliases", "said"),
    [
        (["a", "a"], "each name once"),
        (["two words"], "without blanks"),
    ],
)
def test_served_names_refuses_bad_aliases(aliases: list[str], said: str):
    with pytest.raises(ConfigError) as err:
        load(with_change("tpu-serving:serving/servedModelAliases", aliases, VLLM))
    assert "servedModelAliases" in str(err.value) and said in str(err.value), str(err.value)


def test_served_names_refuses_the_name_itself_as_an_alias():
    name = VLLM["tpu-serving:serving"]["servedModelName"]
    with pytest.raises(ConfigError) as err:
        load(with_change("tpu-serving:serving/servedModelAliases", [name], VLLM))
    assert "is served_model_name already" in str(err.value) or "servedModelName already" in str(err.value), str(
        err.value
    )
