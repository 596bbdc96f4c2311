"""The cover of a lost serving group (:func:`tpu_serving.operations.maintenance.group_cover.cover`): the HPA's minimum raised by the groups
on lost nodes and those recorded lost that do not serve yet, from the groups it ran, its maximum with it, what it had
in the annotation; kept while they are lost, raised again after a forced ``pulumi up``; a hand cover kept; held until
the lost groups serve again; the stack's own bounds given back (from the annotation when the gate has none)."""

from __future__ import annotations

import json

from tpu_serving.operations.maintenance import group_cover as gc

LOST = {"n-b"}


def hpa(low: int = 2, high: int = 3, current: int = 2, record: dict | None = None) -> dict:
    meta: dict = {"name": "vllm"}
    if record is not None:
        meta["annotations"] = {gc.COVER_ANNOTATION: json.dumps(record)}
    return {
        "metadata": meta,
        "spec": {"minReplicas": low, "maxReplicas": high, "scaleTargetRef": {"name": "vllm"}},
        "status": {"currentReplicas": current},
    }


def pod(group: int, on: str, worker: int = 0, *, ready: bool = True, lws: str = "vllm") -> dict:
    labels = {gc.LWS_NAME_LABEL: lws, gc.GROUP_INDEX_LABEL: str(group), gc.WORKER_INDEX_LABEL: str(worker)}
    return {
        "metadata": {"name": f"{lws}-{group}-{worker}", "labels": labels},
        "spec": {"nodeName": on},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


PODS = [pod(0, "n-b", ready=False), pod(0, "n-b2", 1, ready=False), pod(1, "n-a"), pod(1, "n-a2", 1)]


def annotation(c: gc.Cover) -> dict:
    assert c.patch is not None
    return json.loads(c.patch["metadata"]["annotations"][gc.COVER_ANNOTATION])


def test_cover_raises_the_minimum_by_the_lost_groups_and_records_the_bounds() -> None:
    c = gc.cover(hpa(), PODS, LOST)
    assert c is not None and c.patch is not None
    assert c.patch["spec"] == {"minReplicas": 3, "maxReplicas": 3}
    assert annotation(c) == {"minReplicas": 2, "maxReplicas": 3, "groups": 2, "lost": ["0"]}
    assert c.said == "raising HPA vllm's minimum from 2 to 3: groups 0 of vllm are on lost nodes"


def test_cover_counts_the_groups_running_under_load_and_raises_the_maximum_with_the_minimum() -> None:
    """Three groups under load, one lost, the HPA at its maximum: four, the maximum too (else the API refuses a
    minimum above the maximum)."""
    c = gc.cover(hpa(current=3), [*PODS, pod(2, "n-c")], LOST)
    assert c is not None and c.patch is not None
    assert c.patch["spec"] == {"minReplicas": 4, "maxReplicas": 4}
    assert annotation(c)["groups"] == 3


def test_cover_counts_a_group_once_whatever_its_pods_on_lost_nodes() -> None:
    c = gc.cover(hpa(), PODS, {"n-b", "n-b2"})
    assert c is not None and c.patch is not None and c.patch["spec"]["minReplicas"] == 3


def test_cover_keeps_a_raise_and_raises_again_what_was_forced_back() -> None:
    record = {"minReplicas": 2, "maxReplicas": 3, "groups": 2, "lost": ["0"]}
    kept = gc.cover(hpa(3, 3, 3, record), PODS, LOST)
    assert kept is not None and kept.patch is None
    assert kept.said == "HPA vllm keeps its minimum raised to 3: groups 0 of vllm are on lost nodes"
    forced = gc.cover(hpa(2, 3, 3, record), PODS, LOST)  # pulumi up with PULUMI_K8S_ENABLE_PATCH_FORCE
    assert forced is not None and forced.patch is not None
    assert forced.patch["spec"] == {"minReplicas": 3, "maxReplicas": 3}
    assert annotation(forced) == record  # the bounds of before the outage, not the forced ones


def test_cover_raises_again_for_a_second_loss_while_the_first_group_reloads() -> None:
    """SRE review round 29, M1: group 0 lost (raised 2 to 3, group 2 takes a free slice); its VM back, group 0
    reloads, and group 1's VM is lost: groups 0 and 1 do not serve, so the minimum goes to the 2 groups of before plus
    both, 4, and the line says so (it said "from 3 to 3" and added no group)."""
    first = gc.cover(hpa(), [pod(0, "n-a", ready=False), pod(1, "n-b")], {"n-a"})
    assert first is not None and first.patch is not None and first.patch["spec"] == {"minReplicas": 3, "maxReplicas": 3}
    record = annotation(first)
    reloading = [pod(0, "n-a2", ready=False), pod(1, "n-b", ready=False), pod(2, "n-c")]
    second = gc.cover(hpa(3, 3, 3, record), reloading, {"n-b"})
    assert second is not None and second.patch is not None
    assert second.patch["spec"] == {"minReplicas": 4, "maxReplicas": 4}
    assert annotation(second) == {"minReplicas": 2, "maxReplicas": 3, "groups": 2, "lost": ["0", "1"]}
    assert second.said == (
        "raising HPA vllm's minimum from 3 to 4: groups 1 of vllm are on lost nodes, groups 0 do not serve yet"
    )
    kept = gc.cover(hpa(4, 4, 4, annotation(second)), reloading, {"n-b"})  # the next run: raised enough, no patch
    assert kept is not None and kept.patch is None
    assert (
        kept.said
        == "HPA vllm keeps its minimum raised to 4: groups 1 of vllm are on lost nodes, groups 0 do not serve yet"
    )
    served = [pod(0, "n-a2"), pod(1, "n-b", ready=False), pod(2, "n-c")]  # group 0 serves again: nothing lowered
    assert gc.cover(hpa(4, 4, 4, annotation(second)), served, {"n-b"}) == gc.Cover(
        "vllm", "HPA vllm keeps its minimum raised to 4: groups 1 of vllm are on lost nodes"
    )


STACK = (2, 3)
"""The stack's own bounds of the HPA, as the gate's environment carries them (``AUTOSCALER_BOUNDS``)."""


def test_cover_keeps_a_hand_cover_and_gives_back_the_stacks_bounds() -> None:
    """SRE review round 29, M3: the gate silent, the on-call raised 2..3 to 3..3 by hand (the runbook's path); the gate
    comes back with group 0 still lost: it adds no fourth group, records the cover, and gives back the stack's 2..3,
    never the 3..3 it found; an on-call's restore made first is kept, and a restore never raises."""
    found = gc.cover(hpa(3, 3, 3), PODS, LOST, STACK)
    assert found is not None and found.patch is not None and "spec" not in found.patch
    assert annotation(found) == {"minReplicas": 2, "maxReplicas": 3, "groups": 2, "lost": ["0"]}
    assert found.said == "HPA vllm keeps its minimum 3, above the stack's 2 already: groups 0 of vllm are on lost nodes"
    again = gc.cover(hpa(3, 3, 3, annotation(found)), PODS, LOST, STACK)  # the next run: nothing to write
    assert again is not None and again.patch is None
    serving = [pod(0, "n-b"), pod(1, "n-a"), pod(2, "n-c")]
    back = gc.cover(hpa(3, 3, 3, annotation(found)), serving, set(), STACK)
    assert back is not None and back.patch is not None and back.patch["spec"] == {"minReplicas": 2, "maxReplicas": 3}
    assert back.said == "giving HPA vllm the stack's bounds back (2 to 3): groups serve again"
    restored = gc.cover(hpa(2, 3, 3, annotation(found)), serving, set(), STACK)  # the on-call's restore came first
    assert restored is not None and restored.patch is not None
    assert restored.patch["spec"] == {"minReplicas": 2, "maxReplicas": 3}
    lower = gc.cover(hpa(1, 3, 3, annotation(found)), serving, set(), STACK)
    assert lower is not None and lower.patch is not None and lower.patch["spec"]["minReplicas"] == 1


def test_cover_raises_a_hand_cover_short_of_the_lost_groups_from_the_groups_before_it() -> None:
    """A minimum raised by hand by one, two groups lost: the cover adds the second only (2 groups, 2 lost: 4)."""
    two_lost = [*PODS, pod(2, "n-c", ready=False)]
    c = gc.cover(hpa(3, 3, 3), two_lost, {"n-b", "n-c"}, STACK)
    assert c is not None and c.patch is not None and c.patch["spec"] == {"minReplicas": 4, "maxReplicas": 4}
    assert annotation(c)["groups"] == 2


def test_cover_raises_above_a_minimum_pulumi_raised_during_the_cover_and_gives_back_the_new_bounds() -> None:
    """SRE review round 29, M3: a forced ``pulumi up`` sets 3..4 during a cover of 2..3 (the gate's environment with
    it): 3 groups asked for, one lost, so 4; after the outage the new 3..4, not the 2..3 of before."""
    record = {"minReplicas": 2, "maxReplicas": 3, "groups": 2, "lost": ["0"]}
    forced = gc.cover(hpa(3, 4, 3, record), PODS, LOST, (3, 4))
    assert forced is not None and forced.patch is not None
    assert forced.patch["spec"] == {"minReplicas": 4, "maxReplicas": 4}
    assert annotation(forced) == {"minReplicas": 3, "maxReplicas": 4, "groups": 3, "lost": ["0"]}
    assert forced.said == "raising HPA vllm's minimum from 3 to 4: groups 0 of vllm are on lost nodes"
    serving = [pod(0, "n-b"), pod(1, "n-a"), pod(2, "n-c"), pod(3, "n-d")]
    back = gc.cover(hpa(4, 4, 4, annotation(forced)), serving, set(), (3, 4))
    assert back is not None and back.patch is not None and back.patch["spec"] == {"minReplicas": 3, "maxReplicas": 4}


def test_cover_gives_back_the_stacks_bounds_whatever_an_older_run_recorded() -> None:
    """The gate restarted mid-cover (a new program, or an annotation an older gate wrote with the raised bounds it
    found): the stack's bounds go back, and a run that still covers writes them into the record."""
    older = {"minReplicas": 3, "maxReplicas": 3, "groups": 2, "lost": ["0"]}
    kept = gc.cover(hpa(3, 3, 3, older), PODS, LOST, STACK)
    assert kept is not None and kept.patch is not None and "spec" not in kept.patch
    assert annotation(kept) == {"minReplicas": 2, "maxReplicas": 3, "groups": 2, "lost": ["0"]}
    back = gc.cover(hpa(3, 3, 3, older), [pod(0, "n-b"), pod(1, "n-a"), pod(2, "n-c")], set(), STACK)
    assert back is not None and back.patch is not None and back.patch["spec"] == {"minReplicas": 2, "maxReplicas": 3}


def test_cover_keeps_a_raise_while_a_reloading_group_waits_and_raises_what_was_forced_back() -> None:
    """Group 0 back on its VM, reloading: a forced ``pulumi up`` that lowered the minimum is raised again."""
    record = {"minReplicas": 2, "maxReplicas": 3, "groups": 2, "lost": ["0"]}
    reloading = [pod(0, "n-b", ready=False), pod(1, "n-a"), pod(2, "n-c")]
    forced = gc.cover(hpa(2, 3, 3, record), reloading, set(), STACK)
    assert forced is not None and forced.patch is not None
    assert forced.patch["spec"] == {"minReplicas": 3, "maxReplicas": 3}
    assert forced.said == "raising HPA vllm's minimum from 2 to 3: groups 0 of vllm do not serve yet"


def test_cover_ignores_other_workloads_and_nodes_that_are_not_lost() -> None:
    assert gc.cover(hpa(), PODS, {"n-x"}) is None
    assert gc.cover(hpa(), [pod(0, "n-b", lws="other")], LOST) is None


def test_cover_holds_the_raise_until_the_lost_groups_serve_again() -> None:
    record = {"minReplicas": 2, "maxReplicas": 3, "groups": 2, "lost": ["0"]}
    reloading = [pod(0, "n-b", ready=False), pod(1, "n-a"), pod(2, "n-c")]
    held = gc.cover(hpa(3, 3, 3, record), reloading, set())
    assert held is not None and held.patch is None
    assert held.said == "HPA vllm keeps its raised minimum 3 until groups 0 serve again"


def test_cover_gives_the_bounds_back_and_removes_its_annotation() -> None:
    record = {"minReplicas": 2, "maxReplicas": 3, "groups": 2, "lost": ["0"]}
    back = gc.cover(hpa(3, 3, 3, record), [pod(0, "n-b"), pod(1, "n-a"), pod(2, "n-c")], set())
    assert back is not None and back.patch is not None
    assert back.patch == {
        "metadata": {"annotations": {gc.COVER_ANNOTATION: None}},
        "spec": {"minReplicas": 2, "maxReplicas": 3},
    }
    assert back.said == "giving HPA vllm its bounds back (2 to 3): groups serve again"


def test_recorded_reads_nothing_from_an_unreadable_annotation() -> None:
    garbled = hpa()
    garbled["metadata"]["annotations"] = {gc.COVER_ANNOTATION: "{not json"}
    assert gc.recorded(garbled) is None
    assert gc.recorded(hpa(record={"minReplicas": 2})) is None
    assert gc.cover(garbled, PODS, set()) is None
