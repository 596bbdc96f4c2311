"""Preview diffs: field-level changes, and recreate warnings for TPU node pools and the cluster."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from tests.conftest import ALL_STACKS, ROOT, plan_of
from tests.fixtures.configs import plan_edited
from tpu_serving.cost.serve_time import output_lines
from tpu_serving_tools import provider_rules
from tpu_serving_tools.diff.review import cost_change, diff_plans, recreate_reason, render_markdown
from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL

STACK = "llama31-405b-v6e16"


def to_v6e32(tpu_slices=None, serving=None):
    """A v6e-16 -> v6e-32 change, with the parallelism that the 32 chips need."""
    if tpu_slices is not None:
        tpu_slices[0]["slice"] = "v6e-32"
    if serving is not None:
        serving["maxtext"]["iciFsdpParallelism"] = 2


def test_diff_serving_setting_changes_only_the_workload():
    base = plan_of(STACK).as_json()
    head = plan_edited(STACK, serving=lambda s: s["maxtext"].update(maxTargetLength=4096)).as_json()
    diff = diff_plans(STACK, base, head)
    assert diff.warnings == [] and not diff.added and not diff.removed
    (change,) = diff.changed
    assert change.type == "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
    (field,) = change.fields
    assert field[0].endswith("containers[jax-tpu].args[4]")
    assert (field[1], field[2]) == ("max_target_length=2048", "max_target_length=4096")
    report = render_markdown(diff, "main")
    assert "WARNING" not in report and "max_target_length=4096" in report


def test_diff_topology_change_warns_recreate_of_the_node_pool():
    base = plan_of(STACK).as_json()
    head = plan_edited(
        STACK, tpuSlices=lambda s: to_v6e32(tpu_slices=s), serving=lambda s: to_v6e32(serving=s)
    ).as_json()
    diff = diff_plans(STACK, base, head)
    pool_warnings = [w for w in diff.warnings if "TPU node pool `llama405b-v6e16`" in w]
    assert any("placementPolicy.tpuTopology" in w and '"4x4" → "4x8"' in w for w in pool_warnings)
    assert any("`nodeCount` 4 → 8" in w for w in pool_warnings)
    report = render_markdown(diff, "main")
    assert report.splitlines()[2] == "> [!WARNING]"
    # 16 more v6e chips at $2.70 and four more 200 GB boot disks at $0.10/GB-month (the base: the CPU pool in 3 zones).
    assert diff.cost == "+16 chips, +$43.31/hour (+$31,616.00/month): $44.63 → $87.94/hour"
    assert f"**Capacity and cost (estimate):** {diff.cost}" in report.splitlines()


def test_diff_cluster_location_change_warns():
    base = plan_of(STACK).as_json()
    head = json.loads(json.dumps(base))
    next(r for r in head["resources"] if r["type"] == CLUSTER)["inputs"]["location"] = "us-east1"
    (warning,) = diff_plans(STACK, base, head).warnings
    assert warning.startswith("Recreates cluster `llama405b`: `location`")


def test_diff_single_host_resize_is_not_a_recreate():
    base = plan_of(STACK).as_json()
    head = json.loads(json.dumps(base))
    cpu = next(r for r in head["resources"] if r["type"] == NODE_POOL and r["inputs"]["name"] == "llama405b-cpu")
    cpu["inputs"]["autoscaling"]["maxNodeCount"] = 5
    diff = diff_plans(STACK, base, head)
    assert diff.warnings == [] and len(diff.changed) == 1


def test_diff_computed_field_left_out_is_listed_but_replaces_nothing():
    """``initialNodeCount`` is Optional + Computed + ForceNew: left out, the provider keeps it (no Recreates line);
    set to another value, it replaces the pool."""
    base = json.loads(json.dumps(plan_of(STACK).as_json()))  # a copy: other tests share the plan
    pool = next(r for r in base["resources"] if r["type"] == NODE_POOL and r["inputs"]["name"] == "llama405b-v6e16")
    pool["inputs"]["initialNodeCount"] = 0
    head = json.loads(json.dumps(base))
    left_out = next(r for r in head["resources"] if r["type"] == NODE_POOL and r["inputs"]["name"] == "llama405b-v6e16")
    del left_out["inputs"]["initialNodeCount"]
    diff = diff_plans(STACK, base, head)
    assert diff.warnings == []
    (change,) = diff.changed
    assert change.fields == [("initialNodeCount", 0, None)] and change.recreates == []
    left_out["inputs"]["initialNodeCount"] = 2
    (warning,) = diff_plans(STACK, base, head).warnings
    assert warning.startswith("Recreates TPU node pool `llama405b-v6e16`: `initialNodeCount` 0 → 2")
    assert provider_rules.keeps_state_when_left_out(NODE_POOL, "initialNodeCount")
    assert not provider_rules.keeps_state_when_left_out(NODE_POOL, "cluster")


def test_diff_renamed_pool_and_new_stack():
    base = plan_of(STACK).as_json()
    head = json.loads(json.dumps(base))
    pool = next(r for r in head["resources"] if r["type"] == NODE_POOL and "placementPolicy" in r["inputs"])
    pool["urn"] += "-renamed"
    assert any(w.startswith("Recreates (renamed) TPU node pool") for w in diff_plans(STACK, base, head).warnings)
    new = diff_plans("new", None, base)
    assert len(new.added) == len(base["resources"]) and new.warnings == []


@pytest.mark.parametrize(
    "alias",
    [
        lambda urn: {"spec": {"name": urn.rsplit("::", 1)[1], "parentUrn": ""}},
        lambda urn: {"urn": urn},
    ],
    ids=["spec", "urn"],
)
def test_diff_pool_renamed_with_an_alias_to_its_base_name_is_changed_not_recreated(alias):
    """The engine takes a base resource by a head resource's alias (library review, M5): renamed, nothing recreated;
    an alias the base does not hold is a new pool, and the base's is deleted."""
    base = plan_of(STACK).as_json()
    head = json.loads(json.dumps(base))
    pool = next(r for r in head["resources"] if r["type"] == NODE_POOL and "placementPolicy" in r["inputs"])
    was = pool["urn"]
    pool["urn"], pool["name"], pool["aliases"] = was + "-renamed", pool["name"] + "-renamed", [alias(was)]
    diff = diff_plans(STACK, base, head)
    assert diff.warnings == [] and not diff.added and not diff.removed
    (change,) = diff.changed
    assert change.urn == was + "-renamed" and change.fields == [
        ("(alias) name", pool["name"][: -len("-renamed")], pool["name"])
    ]
    pool["aliases"] = [alias(was + "-elsewhere")]
    assert any(w.startswith("Recreates (renamed) TPU node pool") for w in diff_plans(STACK, base, head).warnings)


def test_diff_recreate_rules_come_from_the_provider_schema_for_every_gcp_type_of_every_stack():
    prov = provider_rules.provenance()
    assert prov["repository"] == "hashicorp/terraform-provider-google" and len(prov["commit"]) == 40
    assert prov["by"] == "tools/provider_rules/generate.py" and prov["files"]
    types = {r.type for s in ALL_STACKS for r in plan_of(s).resources if r.custom and r.type.startswith("gcp:")}
    assert types and all(provider_rules.known(t) for t in types), sorted(
        t for t in types if not provider_rules.known(t)
    )


def test_diff_recreate_reasons_follow_the_schema():
    pool = {"type": NODE_POOL, "inputs": {"placementPolicy": {"type": "COMPACT"}}}
    assert recreate_reason(pool, "placementPolicy.tpuTopology") == (
        "slice topology (a TPU slice's topology cannot change in place)"
    )
    assert "nodeConfig.spot is ForceNew" in (recreate_reason(pool, "nodeConfig.spot") or "")
    assert recreate_reason(pool, "nodeCount") == "VMs of a multi-host slice (a slice cannot be resized)"
    single = {"type": NODE_POOL, "inputs": {}}
    assert recreate_reason(single, "nodeCount") is None  # a single-host pool resizes in place
    # a node pool's taints update in place; the nodeConfig block is ForceNew only when added or removed
    assert recreate_reason(single, "nodeConfig.taints[0].key") is None
    assert "nodeConfig is ForceNew" in (recreate_reason(single, "nodeConfig") or "")
    assert "name is ForceNew" in (recreate_reason({"type": CLUSTER, "inputs": {}}, "name") or "")


@pytest.mark.slow
def test_diff_cli_against_a_base_ref(tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    stack_file = repo / "stacks" / f"Pulumi.{STACK}.yaml"
    doc = yaml.safe_load(stack_file.read_text())
    to_v6e32(doc["config"]["tpuSlices"], doc["config"]["serving"])
    stack_file.write_text(yaml.safe_dump(doc))
    proc = subprocess.run(
        [sys.executable, "-m", "tpu_serving_tools.diff.review", "--base", "HEAD", "--stack", STACK],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"### `{STACK}` (against `HEAD`)" in proc.stdout
    assert "Recreates TPU node pool `llama405b-v6e16`: `placementPolicy.tpuTopology`" in proc.stdout
    assert subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout.count("\n") == 1


def test_diff_labels_single_host_tpu_pools_from_the_catalog():
    from tpu_serving_tools.diff.review import _label

    pool = {"type": NODE_POOL, "name": "p", "inputs": {"name": "p", "nodeConfig": {"machineType": "ct6e-standard-8t"}}}
    cpu = {"type": NODE_POOL, "name": "c", "inputs": {"name": "c", "nodeConfig": {"machineType": "n2-standard-8"}}}
    assert _label(pool) == "TPU node pool `p`" and _label(cpu) == "node pool `c`"


def test_diff_webhook_immutable_field_warns_replacement_of_the_leaderworkerset():
    stack = "llama2-70b-disagg-v6e8x2"
    base = plan_of(stack).as_json()
    head = plan_edited(stack, serving=lambda s: s.update(mode="interleaved", replicas=2)).as_json()
    diff = diff_plans(stack, base, head)
    lws = [w for w in diff.warnings if "LeaderWorkerSet `llama70b/jetstream-pathways`" in w]
    assert any("spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize" in w and "replaceOnChanges" in w for w in lws)
    (change,) = [c for c in diff.changed if c.type.endswith(":LeaderWorkerSet")]
    assert any(p.startswith("spec.leaderWorkerTemplate.subGroupPolicy") for p in change.recreates)
    assert "⚠ recreate" in render_markdown(diff, "main")


def test_diff_ignored_paths_are_not_changes():
    base = plan_of(STACK).as_json()
    head = json.loads(json.dumps(base))
    (cluster,) = [r for r in head["resources"] if r["type"] == CLUSTER]
    cluster["inputs"]["nodeConfig"]["diskSizeGb"] = 500  # the removed default pool: ignored by the cluster
    cluster["inputs"]["initialNodeCount"] = 3
    diff = diff_plans(STACK, base, head)
    assert diff.changed == [] and diff.warnings == []
    cluster["ignoreChanges"] = []
    assert any("initialNodeCount is ForceNew" in w for w in diff_plans(STACK, base, head).warnings)


def test_diff_cost_change_reports_the_peak_when_slices_scale_from_zero():
    def outputs(chips: int, hour: float, peak: float) -> dict:
        return {
            "capacity": {"chips": chips},
            "cost": {"perHour": {"total": hour}, "perMonth": {"total": hour * 730}, "peakPerHour": peak},
        }

    grown = cost_change(outputs(16, 20.0, 20.0), outputs(32, 20.0, 39.2))
    assert (
        grown
        == "+16 chips, +$0.00/hour (+$0.00/month): $20.00 → $20.00/hour (with every slice up: $20.00 → $39.20/hour)"
    )
    assert "every slice up" not in cost_change(outputs(16, 20.0, 20.0), outputs(32, 40.0, 40.0))


def test_diff_long_values_are_shown_around_their_first_difference():
    from tpu_serving_tools.diff.review import CELL, _cells

    before = "vllm serve /model " + "--flag=1 " * 30 + "--max-model-len=8192"
    after = before.replace("8192", "4096")
    a, b = _cells(before, after)
    assert "8192" in a and "4096" in b and a.startswith("`...") and len(a) <= CELL + 2
    assert _cells("short", "shorter") == ("`short`", "`shorter`")


def test_diff_cost_of_a_new_stack_says_so():
    from tpu_serving_tools.diff.review import cost_change

    head = {"cost": {"perHour": {"total": 22.19}, "perMonth": {"total": 16198.7}}, "capacity": {"chips": 8}}
    assert cost_change({}, head) == "8 chips, $22.19/hour (a new stack)"
    assert cost_change({"region": "us-east5"}, head) == "8 chips, $22.19/hour (the base has no cost estimate)"


def unchanged_report(stack: str) -> str:
    """The Markdown report of ``stack``'s shipped plan against itself: what every diff prints, with no change."""
    plan = plan_of(stack).as_json()
    return render_markdown(diff_plans(stack, plan, plan), "main")


def test_diff_says_how_a_router_restart_behaves():
    """make diff prints the head plan's Router restart line, as the preview does."""
    report = unchanged_report("vllm-llama33-70b-disagg-v6e8x2")
    assert "**Router restart:** 2 endpoint picker replicas with leader election" in report
    assert "FailClose" in report
    assert "Router restart" not in render_markdown(diff_plans("saxml-175b-v5e32x2", None, None), "main")


def test_diff_says_how_groups_roll_drain_and_scale_down():
    """make diff prints the head plan's rollout, drain and scale-down lines on every diff, changed template or not."""
    stack = "vllm-llama33-70b-v5e16"
    report = unchanged_report(stack)
    assert "**Rollout (when the groups' template changes):** rolling update of up to 3 groups" in report
    assert "**Drain:** a node drain or upgrade takes one group at a time" in report
    assert "**Scale-down:** the HPA removes at most one group every 60 s" in report
    assert "Scale-down" not in render_markdown(diff_plans(stack, None, None), "main")


def test_diff_prints_the_rollout_summary_once_on_a_template_change():
    """A pod-template change prints the head plan's rollout summary on its **Rollout** line, and not a second time
    as the lifecycle's "Rollout (when the groups' template changes)" line; the drain and scale-down lines stay."""
    stack = "vllm-llama33-70b-v5e16"
    base = plan_of(stack).as_json()
    head = plan_edited(stack, serving=lambda s: s["engine"].update(maxModelLen=4096)).as_json()
    diff = diff_plans(stack, base, head)
    assert diff.rollouts, "the edit changes the LeaderWorkerSet's group template"
    summary = base["outputs"]["rollout"]["summary"]
    report = render_markdown(diff, "main")
    assert report.count(summary) == 1
    assert "Rollout (when the groups' template changes)" not in report
    assert "**Drain:** a node drain or upgrade takes one group at a time" in report


def test_diff_warns_when_an_object_declared_anew_loses_to_its_old_resources_delete():
    """New-user review 17, M1: a program grown from one Tenancy to two moves the PriorityClasses to Patch resources
    (TenancyArgs.shared_cluster); pulumi up applies the Patch, then deletes the old PriorityClass resource and the
    object with it, unless that one was retained on delete. The diff said nothing."""
    base = plan_of("vllm-llama33-70b-v5e16").as_json()
    head = json.loads(json.dumps(base))
    old = next(r for r in base["resources"] if r["type"] == "kubernetes:scheduling.k8s.io/v1:PriorityClass")
    old["retainOnDelete"] = False  # a plan of before the classes were retained
    (moved,) = [r for r in head["resources"] if r["urn"] == old["urn"]]
    moved["type"] = "kubernetes:scheduling.k8s.io/v1:PriorityClassPatch"
    moved["urn"] = old["urn"].replace("v1:PriorityClass::", "v1:PriorityClassPatch::")
    name = old["inputs"]["metadata"]["name"]
    warned = [w for w in diff_plans("s", base, head).warnings if w.startswith(f"Deletes PriorityClass {name} after")]
    assert len(warned) == 1 and f"the old resource {old['name']} is removed without retainOnDelete" in warned[0]
    old["retainOnDelete"] = True
    assert not [w for w in diff_plans("s", base, head).warnings if w.startswith("Deletes PriorityClass")]


def test_diff_labels_a_kubernetes_object_by_namespace_and_name():
    """New-user review 17, m5: two namespaces' LeaderWorkerSets both named vllm were told apart by nothing."""
    base = plan_of(STACK).as_json()
    head = json.loads(json.dumps(base))
    (lws,) = [r for r in head["resources"] if r["type"].endswith(":LeaderWorkerSet")]
    lws["inputs"]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"] = {"labels": {"x": "y"}}
    meta = lws["inputs"]["metadata"]
    rollouts = diff_plans(STACK, base, head).rollouts
    assert rollouts and rollouts[0].startswith(f"LeaderWorkerSet `{meta['namespace']}/{meta['name']}`: "), rollouts


def test_render_markdown_prints_the_head_plans_time_to_serve_and_cost_per_token_lines() -> None:
    assert output_lines({"timeToServe": ["t1", "t2"], "tokenCost": ["c1"], "other": ["x"]}) == [
        ("Time to serve", "t1"),
        ("Time to serve", "t2"),
        ("Cost per token", "c1"),
    ]
    assert output_lines({}) == []
    head = plan_of("vllm-llama33-70b-v6e8").as_json()
    text = render_markdown(diff_plans("vllm-llama33-70b-v6e8", head, head), "main")
    assert "**Time to serve:** LeaderWorkerSet vllm" in text and "**Cost per token:** slices v6e8a" in text


def test_diff_a_tpu7x_topology_change_recreates_the_workload_policy_and_its_pool_and_a_new_slice_changes_neither():
    """SRE review: a new topology replaces the workload policy (named as one, its pools deleted first) and the pool; a
    slice added of the same kind leaves the policy as it is (its description names the shape, not the pools: Compute
    Engine updates no workload policy in place)."""
    stack = "vllm-llama31-405b-tpu7x16"
    base = plan_of(stack).as_json()
    bigger = plan_edited(stack, tpuSlices=lambda s: s[0].update(slice="tpu7x-32")).as_json()
    warnings = diff_plans(stack, base, bigger).warnings
    assert any(
        w.startswith("Recreates workload policy `vllm405btpu7x-tpu7x16-placement` (and the TPU pools") for w in warnings
    )
    assert any(w.startswith("Recreates TPU node pool `vllm405btpu7x-tpu7x16`") for w in warnings)
    two = plan_edited(
        stack, tpuSlices=lambda s: s[0].update(count=2), serving=lambda s: s.update(replicas=2, singleGroup=None)
    ).as_json()
    diff = diff_plans(stack, base, two)
    assert not [c for c in diff.changed if c.type == "gcp:compute/resourcePolicy:ResourcePolicy"]
    assert [r for r in diff.added if r["type"] == NODE_POOL]  # the selector selects: a pool is added
