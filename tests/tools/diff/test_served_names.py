"""tpu_serving_tools.diff.served_names: the preview diff's caution when a rollout drops a served model name (SRE review
32, M1: a rename was announced as "no serving capacity lost" while each name got 404 from part of the groups)."""

from __future__ import annotations

import copy
from typing import Any

from tests.conftest import plan_of
from tpu_serving_tools.diff import served_names
from tpu_serving_tools.diff.review import diff_plans, render_markdown

STACK = "vllm-llama33-70b-v6e8"
NAME = "meta-llama/Llama-3.3-70B-Instruct"


def renamed(plan: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``plan`` with every occurrence of the served-name flag's value ``old`` written ``new``."""
    out = copy.deepcopy(plan)
    for r in out["resources"]:
        if (r["inputs"] or {}).get("kind") == "LeaderWorkerSet":
            spec = r["inputs"]["spec"]["leaderWorkerTemplate"]
            for template in (spec.get("leaderTemplate"), spec.get("workerTemplate")):
                for c in (template or {}).get("spec", {}).get("containers", []):
                    c["args"] = [a.replace(f"--served-model-name={old}", new) for a in c.get("args") or []]
    return out


def test_served_names_reads_both_spellings_of_the_flag():
    assert served_names.served_names({"inputs": {"a": ["vllm serve m --served-model-name=x --port=1"]}}) == ("x",)
    assert served_names.served_names({"inputs": {"a": ["vllm serve m --served-model-name x y --port=1"]}}) == (
        "x",
        "y",
    )
    assert served_names.served_names({"inputs": {"a": ["vllm serve m --served-model-name x y && b"]}}) == ("x", "y")
    assert served_names.served_names({"inputs": {"a": ["vllm serve m"]}}) == ()


def test_served_names_a_rename_is_cautioned_in_the_diff():
    base = plan_of(STACK).as_json()
    head = renamed(base, NAME, "--served-model-name=llama-3.1-70b")
    diff = diff_plans(STACK, base, head)
    (caution,) = diff.cautions
    assert caution.startswith(f"LeaderWorkerSet vllm-llama70b/vllm stops answering {NAME} (served names {NAME} -> ")
    assert "add llama-3.1-70b to servedModelAliases" in caution
    assert "> [!CAUTION]" in render_markdown(diff, "HEAD")


def test_served_names_an_alias_added_is_no_caution_and_dropping_it_later_is_none_either():
    base = plan_of(STACK).as_json()
    both = renamed(base, NAME, f"--served-model-name {NAME} llama-3.1-70b")
    assert diff_plans(STACK, base, both).cautions == []  # step 1: both names served
    new_only = renamed(base, NAME, "--served-model-name=llama-3.1-70b")
    # step 2, the rename once clients send the new name: the old name is dropped, and said so
    (caution,) = diff_plans(STACK, both, new_only).cautions
    assert f"stops answering {NAME}" in caution
    assert diff_plans(STACK, base, base).cautions == []
