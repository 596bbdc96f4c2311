"""Every stack renders exactly its reviewed golden plan and manifests (``make golden`` updates them)."""

import difflib
import json
import os
import subprocess

import pytest

from tests.conftest import ALL_STACKS, ROOT, plan_of
from tpu_serving_tools.golden import review as golden_review
from tpu_serving_tools.golden.write import GOLDEN, render


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_golden_stack_renders_reviewed_files(stack):
    for name, text in render(stack, plan_of(stack)).items():
        path = GOLDEN / name
        assert path.is_file(), f"no golden file {name}: run `make golden` and review it"
        golden = path.read_text()
        if text != golden:
            diff = "".join(
                difflib.unified_diff(golden.splitlines(True), text.splitlines(True), f"golden/{name}", "rendered", n=2)
            )
            pytest.fail(f"{name} differs from its golden file (review, then `make golden`):\n{diff[:6000]}")


def test_golden_no_file_without_a_stack():
    names = {p.name for p in GOLDEN.iterdir()}
    expected = {f"{s}.{kind}" for s in ALL_STACKS for kind in ("plan.json", "manifests.yaml")}
    assert names == expected


# --------------------------------------------------------------------------- review of a regeneration


def _plan(*resources: dict, outputs: dict | None = None) -> str:
    return json.dumps({"resources": list(resources), "outputs": outputs or {}})


def _res(name: str, replicas: int = 1, image: str = "a:1", urn: str = "") -> dict:
    return {
        "urn": urn or f"urn:pulumi:s::p::k8s:LeaderWorkerSet::{name}",
        "type": "k8s:LeaderWorkerSet",
        "name": name,
        "inputs": {"spec": {"replicas": replicas, "containers": [{"image": image}]}},
    }


def test_golden_review_names_added_removed_and_changed_fields():
    old = {"s.plan.json": _plan(_res("keep"), _res("gone"), outputs={"endpoint": "x"})}
    new = {"s.plan.json": _plan(_res("keep", replicas=2, image="a:2"), _res("new"), outputs={"endpoint": "y"})}
    changes = golden_review.tree_changes(old, new)
    assert [c.key for c in changes] == [
        "s (stack) output.endpoint",
        "s gone -",
        "s keep inputs.spec.containers[0].image",
        "s keep inputs.spec.replicas",
        "s new +",
    ]
    replicas = next(c for c in changes if c.field == "inputs.spec.replicas")
    assert (replicas.old, replicas.new) == ("1", "2")
    assert "golden plans: 5 change(s) in 4 resource(s)" in golden_review.report(changes)


def test_golden_review_a_renamed_resource_is_removed_and_added():
    old = {"s.plan.json": _plan(_res("x", urn="urn:a::x"))}
    new = {"s.plan.json": _plan(_res("x", urn="urn:b::x"))}
    assert sorted(c.field for c in golden_review.tree_changes(old, new)) == ["+", "-"]
    assert golden_review.tree_changes(old, old) == []


def test_golden_review_an_unlisted_change_is_reported():
    changes = golden_review.tree_changes(
        {"s.plan.json": _plan(_res("a"))}, {"s.plan.json": _plan(_res("a", replicas=3))}
    )
    assert golden_review.unacknowledged(changes, set()) == changes
    assert golden_review.unacknowledged(changes, {"s a inputs.spec.replicas"}) == []


def test_golden_review_base_is_origin_main_where_main_is_no_branch(tmp_path):
    """New-user review round 39, m2: a clone checked out on another branch has main only as origin/main."""

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "tests" / "golden").mkdir(parents=True)
    (tmp_path / "tests" / "golden" / "s.plan.json").write_text("{}")
    git("init", "-q", "-b", "feature")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "c")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    base = golden_review.base_tree(tmp_path, "main")
    assert base.ref == "origin/main" and base.tree == {"s.plan.json": "{}"}
    with pytest.raises(golden_review.BaseUnavailable):
        golden_review.base_tree(tmp_path, "v9")  # a ref named on purpose is not replaced


def test_golden_every_change_against_the_base_is_acknowledged():
    """The committed goldens against the base branch (``GOLDEN_BASE``, default ``main``): every changed resource
    field is listed in tests/golden_changes.txt, so a regeneration is never silent."""
    try:
        read = golden_review.base_tree(ROOT, os.environ.get("GOLDEN_BASE", "main"))
    except golden_review.BaseUnavailable as err:
        pytest.fail(f"{err}: fetch the base branch or set GOLDEN_BASE to a ref that has it")
    base, old = read.ref, read.tree
    assert old, f"no golden plans at {base}"
    changes = golden_review.tree_changes(old, golden_review.working_tree(ROOT))
    missing = golden_review.unacknowledged(changes, golden_review.acknowledged(ROOT))
    assert not missing, "golden changes not listed in tests/golden_changes.txt:\n" + "\n".join(
        str(c) for c in missing[:50]
    )


def test_golden_review_lists_the_listed_unchanged_keys_only_when_verbose():
    stale = [f"s r{i} inputs.x" for i in range(40)]
    assert golden_review.stale_lines(stale, "main", verbose=False) == []  # new-user review 12, m3: noise
    assert golden_review.stale_lines(stale, "main", verbose=True)[0] == (
        f"listed in {golden_review.ACKNOWLEDGED} but unchanged against main: 40:"
    )
    assert golden_review.stale_lines(stale, "main", verbose=True)[1:] == [f"  {k}" for k in stale]
    assert golden_review.stale_lines([], "main", verbose=False) == []


def test_golden_review_a_new_stack_needs_no_listed_line_but_a_changed_one_does():
    """New-user review 11, m9: a new stack's golden plan asked for one line per resource in the shared list."""
    plan = (ROOT / "tests" / "golden" / "vllm-llama33-70b-v6e8.plan.json").read_text()
    changes = golden_review.tree_changes({}, {"mine.plan.json": plan})
    assert [c.field for c in changes] == [golden_review.NEW] and "resources)" in changes[0].resource
    assert golden_review.unacknowledged(changes, set()) == []
    assert str(changes[0]).startswith("new stack mine (")
    edited = json.loads(plan)
    edited["resources"][0]["inputs"]["edited"] = True
    changed = golden_review.tree_changes({"mine.plan.json": plan}, {"mine.plan.json": json.dumps(edited)})
    assert len(golden_review.unacknowledged(changed, set())) == 1


def test_golden_review_help_is_help(capsys):
    with pytest.raises(SystemExit) as done:
        golden_review.main(["--help"])
    assert done.value.code == 0 and "usage: python -m tpu_serving_tools.golden.review" in capsys.readouterr().out
