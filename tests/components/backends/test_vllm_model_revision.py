"""``serving.modelRevision`` / ``VllmServingArgs.model_revision``: the Hub revision the ``hugging-face`` loader
downloads (``--revision``). Unset, each group took the repository's default branch when it started, and nothing
pinned one or said so (SRE review 34, m1); a stack file's ``production: true`` and a program's production reading now
name it."""

from __future__ import annotations

import copy
import json

import pytest

from tests.fixtures.configs import VLLM, load, plan_edited, with_serving
from tpu_serving.backends.vllm.args import WeightsLoader, extra_args_problem, revision_problem
from tpu_serving.config import ConfigError
from tpu_serving_tools.runtime import program_gaps
from tpu_serving_tools.runtime.planview import PlanView

STACK = "vllm-llama33-70b-v5e16"  # production: false, so its gaps are listed, not refused
SHA = "6f6073b423013f6a7d4d9f39144961bfbfbc386b"
HUB = {"loader": "hugging-face", "model": "meta-llama/Llama-3.3-70B-Instruct"}


def _plan(revision: str | None):
    def edit(serving: dict) -> None:
        serving.update(HUB, **({"modelRevision": revision} if revision else {}))

    return plan_edited(STACK, serving=edit).as_json()


def _scripts(plan: dict) -> list[str]:
    """The shell line of each container that starts ``vllm serve`` (a multi-host group's leader)."""
    return [
        c["args"][0]
        for r in plan["resources"]
        if r["type"].endswith(":LeaderWorkerSet")
        for t in ("leaderTemplate", "workerTemplate")
        for c in r["inputs"]["spec"]["leaderWorkerTemplate"].get(t, {}).get("spec", {}).get("containers", [])
        if "vllm serve " in c["args"][0]
    ]


def test_vllm_model_revision_is_the_engines_revision_flag_and_no_gap():
    plan = _plan(SHA)
    scripts = _scripts(plan)
    assert scripts and all(f"--revision={SHA}" in s for s in scripts), scripts
    assert not [g for g in plan["outputs"]["production"]["gaps"] if "modelRevision" in json.dumps(g)]


def test_vllm_model_revision_unset_is_a_production_gap_of_the_stack_and_of_a_program():
    plan = _plan(None)
    assert not any("--revision" in s for s in _scripts(plan))
    (gap,) = [g for g in plan["outputs"]["production"]["gaps"] if "modelRevision" in json.dumps(g)]
    assert "default branch at each group start" in json.dumps(gap)
    as_program = copy.deepcopy(plan)
    as_program["resources"] = [r for r in plan["resources"] if r["type"] != program_gaps.DEPLOYMENT]
    found = {f.subject: f.reason for f in program_gaps.check(PlanView(as_program)).failures()}
    (subject,) = [s for s in found if s.startswith("unpinned of VllmServing ")]
    assert "production: true requires a commit sha in model_revision" in found[subject]


def test_vllm_model_revision_is_refused_beside_another_loader_and_when_malformed():
    with pytest.raises(ConfigError) as err:
        load(with_serving(VLLM, modelRevision=SHA))  # the fixture's loader is gcsfuse
    assert any("serving.modelRevision" in p and "only the hugging-face loader" in p for p in err.value.problems)
    with pytest.raises(ConfigError) as err:
        load(with_serving(VLLM, modelRevision="main branch", **HUB))
    assert any("modelRevision" in p and "without blanks" in p for p in err.value.problems), err.value.problems
    assert revision_problem("--main") and revision_problem("") and not revision_problem(SHA)
    assert "set by the component from the serving settings" in extra_args_problem([f"--revision={SHA}"])
    assert WeightsLoader.HUGGING_FACE.value == HUB["loader"]
