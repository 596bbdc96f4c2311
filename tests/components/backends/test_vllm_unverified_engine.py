"""``images.unverifiedVllm``: an engine image of another release, run on the pinned release's flags, said as
unverified in the preview and in make check's engines category, with what the conformance tables know of it
(issue 38, point 3: the engine release was locked to the package release, with no override)."""

from __future__ import annotations

import re

import pytest

from tests.fixtures.configs import plan_edited, plan_edited_once
from tpu_serving.config import ConfigError
from tpu_serving.config.loading import load_stack_config
from tpu_serving_tools.check import run_checks
from tpu_serving_tools.conformance import vllm as conformance
from tpu_serving_tools.runtime.planview import PlanView

STACK = "vllm-llama33-70b-v5e16"  # production: false (an unverified engine is a production gap)
NEWER = "vllm/vllm-tpu:v0.30.0"
OLDER = "vllm/vllm-tpu:v0.21.0"  # a release the conformance tables hold


def _with(image: str):
    def edit(serving: dict) -> None:
        serving.setdefault("images", {})["unverifiedVllm"] = image

    return plan_edited_once(STACK, serving=edit)


def _engines(plan) -> list:
    view = PlanView(plan.as_json())
    return next(r for r in run_checks(view) if r.category == "engines").findings


def test_vllm_unverified_engine_runs_the_image_on_the_pinned_flags_and_says_so():
    plan = _with(NEWER)
    view = PlanView(plan.as_json())
    (image,) = {c["image"] for _, c in conformance._containers(view)}
    assert image.endswith(f"-dockerhub/{NEWER}")  # through the stack's Docker Hub mirror, as the pinned one
    lines = conformance.engine_lines(view)
    assert lines[0].startswith(f"Engine: unverified engine release: {image} runs on the flags and environment built")
    assert "no conformance table for its release (0.30.0; tables: 0.21.0, 0.29.0)" in lines[1]
    findings = _engines(plan)
    assert findings and all(f.ok for f in findings), [f for f in findings if not f.ok]
    engines = [f for f in findings if re.match(r"^engine [^ ]+/vllm (leader|worker) ", f.subject)]
    assert engines and all("unverified (images.unverifiedVllm)" in f.reason for f in engines)


def test_vllm_unverified_engine_of_a_tabled_release_is_checked_against_its_table_too():
    engines = [f for f in _engines(_with(OLDER)) if re.match(r"^engine [^ ]+/vllm (leader|worker) ", f.subject)]
    assert engines and all(f.ok and "its release 0.21.0's table checked too" in f.reason for f in engines)
    lacking, _ = conformance.release_differences(OLDER, ["--max-model-len", "--no-such-flag-in-any-release"])
    assert lacking == ["vllm serve --no-such-flag-in-any-release: no such flag in vllm 0.21.0, the unverified image's"]


def test_vllm_unverified_engine_the_pinned_field_still_refuses_another_release_and_names_the_override():
    from tests.fixtures.configs import VLLM, with_change

    with pytest.raises(ConfigError) as err:
        load_stack_config(with_change("tpu-serving:serving/images", {"vllm": NEWER}, base=VLLM))
    assert "or set unverifiedVllm beside it to run that release unverified on these flags" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_stack_config(
            with_change("tpu-serving:serving/images", {"unverifiedVllm": "vllm/vllm-tpu:latest"}, base=VLLM)
        )
    assert "latest" in str(err.value)


def test_vllm_unverified_engine_absent_says_nothing():
    view = PlanView(plan_edited_once(STACK).as_json())
    assert conformance.engine_lines(view) == [] and conformance.unverified_images(view) == frozenset()


def test_vllm_unverified_engine_is_a_production_gap():
    """GKE review round 63, m3: a production stack took an engine release nothing here checked."""
    from tpu_serving.config import ConfigError as Refused

    with pytest.raises(Refused) as err:
        plan_edited("vllm-llama33-70b-v6e8", serving=lambda s: s.setdefault("images", {}).update(unverifiedVllm=NEWER))
    assert "serving.images.unverifiedVllm" in str(err.value) and "nothing here checked it" in str(err.value)
    gaps = _with(NEWER).outputs["production"]["gaps"]
    assert [g for g in gaps if g.startswith("serving.images.unverifiedVllm vllm/vllm-tpu:v0.30.0: ")]


def test_vllm_unverified_engine_the_pinned_field_refuses_an_image_of_another_name():
    """Library review 1, M2: the GPU image vllm/vllm-openai at the pinned tag passed every check."""
    from tpu_serving.catalog.images import release_image_problem

    problem = release_image_problem("vllm-tpu")("vllm/vllm-openai:v0.29.0")
    assert problem.startswith("is not a vllm-tpu image")
    assert release_image_problem("vllm-tpu")("us-east5-docker.pkg.dev/p/r/vllm/vllm-tpu:v0.29.0") == ""


def test_vllm_unverified_engine_of_another_name_is_still_counted_by_the_engines_check():
    engines = [
        f
        for f in _engines(_with("registry.example.com/team/vllm-tpu:v0.29.1-fix"))
        if re.match(r"^engine [^ ]+/vllm (leader|worker) ", f.subject)
    ]
    assert engines and all("unverified (images.unverifiedVllm)" in f.reason for f in engines)


def test_vllm_unverified_engine_refuses_an_image_that_is_not_vllm_tpu():
    """Library review 2, M3: the GPU image came in through the unverified field."""
    from tests.fixtures.configs import VLLM, with_change

    with pytest.raises(ConfigError) as err:
        load_stack_config(
            with_change("tpu-serving:serving/images", {"unverifiedVllm": "vllm/vllm-openai:v0.29.0"}, base=VLLM)
        )
    assert "is not a vllm-tpu image" in str(err.value)
