"""The changelog against the plans: each shipped stack previewed at the previous release (its code and its stack
files, in a git worktree of the tag) and at this checkout; every change the diff shows is one the changelog's
"What a deployed stack sees" table lists, and every row of that table shows in some stack's diff."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.diff.review import RELEASES, DiffError, _check_out, diff_plans, project_stacks, render_plan

PREVIOUS_TAG = "v0.2.0"
PREVIOUS = RELEASES[PREVIOUS_TAG]
"""The previous release, 0.2.0, by its commit: an ancestor of main, so every clone of main has it. The git tag
``v0.2.0`` names the same commit, but a clone of one branch carries no tag (CI's clone has none)."""
SECTION = "### What a deployed stack sees"
ROW = re.compile(r"^\| `([^`]+)` \| (.+?) \| (.+) \|$")


def changelog_rows(text: str) -> list[tuple[str, list[str], str]]:
    """(resource type pattern, field patterns, why) of the unreleased version's table of plan changes."""
    unreleased = text.split("\n## ")[1]
    section = unreleased.split(SECTION, 1)[1].split("\n### ", 1)[0]
    rows = []
    for line in section.splitlines():
        m = ROW.match(line)
        if m:
            rows.append((m.group(1), re.findall(r"`([^`]+)`", m.group(2)), m.group(3)))
    return rows


def plan_changes(base: dict | None, head: dict | None, stack: str) -> set[tuple[str, str]]:
    """(resource type, field path) of every change; ``+``/``-`` for a resource added or removed."""
    diff = diff_plans(stack, base, head)
    found = {(r["type"], "+") for r in diff.added} | {(r["type"], "-") for r in diff.removed}
    found |= {(c.type, path) for c in diff.changed for path, _, _ in c.fields}
    return found


def matches(value: str, pattern: str) -> bool:
    """``pattern`` with ``*`` for any run of characters; everything else literal (``[`` too)."""
    return re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), value) is not None


def covered(change: tuple[str, str], row: tuple[str, list[str], str]) -> bool:
    type_, path = change
    return matches(type_, row[0]) and any(matches(path, p) for p in row[1])


def compared_stacks(base_root: Path, root: Path) -> list[str]:
    """The stacks shipped at both releases: what a deployed stack sees. A stack added since (a user's own, by
    docs/add-your-own-model.md) is no change to a deployed stack, and one removed since has no plan now."""
    return sorted(project_stacks(base_root) & project_stacks(root))


def test_release_diff_compares_the_stacks_shipped_at_both_releases(tmp_path: Path):
    base, head = tmp_path / "base", tmp_path / "head"
    for root, stacks in ((base, ("shipped", "removed")), (head, ("shipped", "mine"))):
        (root / "stacks").mkdir(parents=True)
        (root / "Pulumi.yaml").write_text("name: p\nruntime: python\nstackConfigDir: stacks\n")
        for stack in stacks:
            (root / "stacks" / f"Pulumi.{stack}.yaml").write_text("config: {}\n")
    assert compared_stacks(base, head) == ["shipped"]


def test_release_diff_previous_release_is_the_tagged_commit_where_the_tag_exists():
    """Where the clone has the tag (a developer's), it names the commit the test compares with."""
    tagged = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{PREVIOUS_TAG}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if tagged.returncode == 0:
        assert tagged.stdout.strip() == PREVIOUS
    assert f"git tag `{PREVIOUS_TAG}`" in (ROOT / "CHANGELOG.md").read_text()


@pytest.mark.slow
def test_release_diff_a_release_name_works_without_its_tag(tmp_path: Path):
    """``make diff BASE=v0.2.0`` in a clone that has the release's commit but not its tag (CI's, a branch clone)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-tags", str(ROOT), str(clone)], check=True)
    assert subprocess.run(["git", "tag"], cwd=clone, capture_output=True, text=True, check=True).stdout == ""
    worktree = _check_out(clone, PREVIOUS_TAG, tmp_path / "base")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=worktree, capture_output=True, text=True, check=True)
    assert head.stdout.strip() == PREVIOUS
    with pytest.raises(DiffError, match="or a release: v0.2.0"):
        _check_out(clone, "v0.1.9", tmp_path / "other")


def test_release_diff_changelog_table_parses():
    rows = changelog_rows((ROOT / "CHANGELOG.md").read_text())
    assert rows and all(fields for _, fields, _ in rows)


@pytest.mark.slow
def test_release_diff_of_every_shipped_stack_is_what_the_changelog_says(tmp_path: Path):
    try:
        base_root = _check_out(ROOT, PREVIOUS, tmp_path / "base")
    except DiffError as err:
        pytest.fail(f"{err}: the previous release's commit must be in the clone (a shallow clone lacks it)")
    try:
        changes: dict[tuple[str, str], set[str]] = {}
        for stack in compared_stacks(base_root, ROOT):
            before = render_plan(base_root, stack, tmp_path / "plans" / "base" / stack)
            after = render_plan(ROOT, stack, tmp_path / "plans" / "head" / stack)
            for change in plan_changes(before, after, stack):
                changes.setdefault(change, set()).add(stack)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tmp_path / "base")], cwd=ROOT, check=False)
    rows = changelog_rows((ROOT / "CHANGELOG.md").read_text())
    assert changes, "no change at all against the previous release: the comparison ran on nothing"
    unlisted = sorted(
        f"{t} {p} ({', '.join(sorted(s))})"
        for (t, p), s in changes.items()
        if not any(covered((t, p), r) for r in rows)
    )
    assert not unlisted, "plan changes the changelog's table does not list:\n" + "\n".join(unlisted)
    stale = [f"{r[0]} {r[1]}" for r in rows if not any(covered(c, r) for c in changes)]
    assert not stale, "changelog rows no stack's diff shows:\n" + "\n".join(stale)


def test_release_diff_matching_is_literal_but_for_the_star():
    row = ("kubernetes:*:PathwaysJob", ["*containers[main].command*"], "why")
    assert covered(
        ("kubernetes:pathways-job.pathways.domain/v1:PathwaysJob", "spec.x.containers[main].command[2]"), row
    )
    assert not covered(("kubernetes:pathways-job.pathways.domain/v1:PathwaysJob", "spec.x.containers[m].command"), row)
    assert not covered(("kubernetes:apps/v1:Deployment", "spec.x.containers[main].command[2]"), row)
