"""The host-maintenance gate's program (:mod:`tpu_serving.operations.maintenance.maintenance_gate`): :func:`decide` on every hold reason, the
pick of the earliest window, the HPA hold, the lost-node page and its maintenance exemption, and ``main`` against a
fake API (its JSON line, its patch, a 422)."""

from __future__ import annotations

import dataclasses

import pytest

from tpu_serving.operations.maintenance import maintenance_gate as mg

NOW = 1_800_000_000.0
GATE = mg.Gate(
    pools=("p-a", "p-b", "p-c"),
    namespace="serving",
    leader_worker_sets=("vllm",),
    fewest_groups=2,
    due_seconds=86400,
    lost_seconds=600,
    maintenance_seconds=21600,
    autoscalers=("vllm",),
)


def iso(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def node(name: str, pool: str, window: str | None = None, *, perform: bool = False, ready: bool = True,
         since: float = NOW - 7200, cordoned: bool = False) -> dict:  # fmt: skip
    labels = {mg.POOL_LABEL: pool}
    if window is not None:
        labels[mg.SCHEDULED_LABEL] = window
    if perform:
        labels[mg.PERFORM_LABEL] = "true"
    ready_condition = {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": iso(since)}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"unschedulable": True} if cordoned else {},
        "status": {"conditions": [ready_condition]},
    }


def pod(name: str, on: str, worker: int = 0, *, ready: bool = True, lws: str = "vllm") -> dict:
    labels = {mg.LWS_NAME_LABEL: lws, mg.WORKER_INDEX_LABEL: str(worker)}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"nodeName": on},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def pools(windows: dict[str, str | None]) -> list[dict]:
    """One node per pool, the given window on it (None: no maintenance pending)."""
    return [node(f"n-{p}", p, w) for p, w in windows.items()]


SERVING = [pod("vllm-0", "n-p-a"), pod("vllm-1", "n-p-b")]
IN_2H, IN_40H, IN_50H = str(int(NOW + 7200)), str(int(NOW + 40 * 3600)), str(int(NOW + 50 * 3600))


def test_decide_starts_the_pool_whose_window_opens_first() -> None:
    d = mg.decide(pools({"p-a": IN_50H, "p-b": IN_40H, "p-c": None}), SERVING, GATE, NOW, False)
    assert (d.action, d.severity, d.pool, d.nodes, d.pages) == ("start", "INFO", "p-b", ("n-p-b",), ())
    assert d.message == f"starting pool p-b (window opens in {40 * 3600} s)"


def test_decide_starts_a_pool_that_holds_no_serving_group_first() -> None:
    """SRE review round 48, m6: an idle pool's maintenance costs no group, so it goes first, whatever its window."""
    d = mg.decide(pools({"p-a": IN_40H, "p-b": IN_2H, "p-c": IN_50H}), SERVING, GATE, NOW, False)
    assert (d.action, d.pool) == ("start", "p-c")


def test_decide_labels_every_pending_node_of_the_pool_and_no_other() -> None:
    nodes = [node("a1", "p-a", IN_40H), node("a2", "p-a", IN_50H), node("a3", "p-a"), node("b1", "p-b", IN_50H)]
    d = mg.decide(nodes, SERVING, GATE, NOW, False)
    assert (d.action, d.pool, d.nodes) == ("start", "p-a", ("a1", "a2"))


def test_decide_is_idle_without_pending_maintenance() -> None:
    d = mg.decide(pools({"p-a": None, "p-b": None}), SERVING, GATE, NOW, False)
    assert (d.action, d.severity, d.nodes) == ("idle", "INFO", ())


def test_decide_ignores_nodes_of_other_pools() -> None:
    d = mg.decide([node("x", "not-serving", IN_2H)], SERVING, GATE, NOW, False)
    assert d.action == "idle"


def made_by_gke(name: str, window: str | None = None, *, ready: bool = True, since: float = NOW - 7200) -> dict:
    """A node of a pool GKE made for the serving's ComputeClass (a Spot step's slice): no pool of the gate's."""
    made = node(name, "gke-made-spot", window, ready=ready, since=since)
    made["metadata"]["labels"][mg.CLASS_LABEL] = "c-serving"
    return made


def test_decide_watches_the_nodes_of_the_serving_compute_class_as_its_own() -> None:
    """SRE review of the capacity fallback, M2: a group on a slice GKE made for the class is the stack's to watch; a
    node of another class, or of none, is not."""
    classed = dataclasses.replace(WATCH, compute_class="c-serving")
    lost = made_by_gke("n-spot", ready=False, since=NOW - 601)
    pods = [pod("vllm-0", "n-p-a"), pod("vllm-1", "n-spot")]
    d = mg.decide([node("n-p-a", "p-a"), lost], pods, classed, NOW, False)
    assert (d.action, d.severity, d.lost) == ("watch", "ERROR", ("n-spot",))
    assert d.pages == ("node n-spot NotReady for 601 s holds a serving pod",)
    assert mg.decide([node("n-p-a", "p-a"), lost], pods, WATCH, NOW, False).pages == ()  # no class: not its node
    other = dataclasses.replace(WATCH, compute_class="c-other")
    assert mg.decide([node("n-p-a", "p-a"), lost], pods, other, NOW, False).pages == ()


def test_decide_starts_only_its_own_pools_not_one_gke_made_for_the_class() -> None:
    """A pool GKE made is not the gate's to start (its admission policy names the gate's pools), but its node in
    maintenance holds the next start, as the gate's own would."""
    classed = dataclasses.replace(GATE, compute_class="c-serving")
    pods = [pod("vllm-0", "n-spot"), pod("vllm-1", "n-p-b")]
    d = mg.decide([made_by_gke("n-spot", IN_2H), node("n-p-b", "p-b"), node("n-p-c", "p-c")], pods, classed, NOW, False)
    assert (d.action, d.nodes) == ("idle", ())
    d = mg.decide([made_by_gke("n-spot", IN_2H), node("n-p-c", "p-c", IN_40H)], pods, classed, NOW, False)
    assert (d.action, d.pool, d.nodes) == ("start", "p-c", ("n-p-c",))
    cordoned = made_by_gke("n-spot")  # the runbook's move back cordons the fallback nodes: its group still serves
    cordoned["spec"] = {"unschedulable": True}
    d = mg.decide([cordoned, node("n-p-c", "p-c", IN_40H)], pods, classed, NOW, False)
    assert (d.action, d.pool) == ("start", "p-c")  # GKE review of the fallback runbook, m3: no hold for it
    own = node("n-p-c", "p-c", IN_40H, cordoned=True)
    assert mg.decide([own, node("n-p-b", "p-b", IN_50H)], pods, classed, NOW, False).action == "hold"
    down = made_by_gke("n-spot", str(int(NOW - 60)))
    d = mg.decide([down, node("n-p-c", "p-c", IN_40H)], pods, classed, NOW, False)
    assert (d.action, d.pool) == ("hold", "p-c") and "n-spot (in maintenance)" in d.message


@pytest.mark.parametrize(
    ("busy", "why"),
    [
        (node("n-p-c", "p-c", perform=True), "n-p-c (in maintenance)"),
        (node("n-p-c", "p-c", ready=False), "n-p-c (NotReady)"),
        (node("n-p-c", "p-c", cordoned=True), "n-p-c (cordoned)"),
        (node("n-p-c", "p-c", str(int(NOW - 60))), "n-p-c (in maintenance)"),
    ],
)
def test_decide_holds_while_a_pool_node_is_busy(busy: dict, why: str) -> None:
    d = mg.decide([*pools({"p-a": IN_50H, "p-b": None}), busy], SERVING, GATE, NOW, False)
    assert (d.action, d.severity, d.pool) == ("hold", "WARNING", "p-a")
    assert d.message.endswith(f"nodes busy: {why}")


def test_decide_holds_while_a_serving_pod_is_not_ready() -> None:
    serving = [*SERVING, pod("vllm-1-1", "n-p-b", 1, ready=False)]
    d = mg.decide(pools({"p-a": IN_50H, "p-b": None}), serving, GATE, NOW, False)
    assert (d.action, d.severity) == ("hold", "WARNING")
    assert d.message.endswith("2 of 2 leaders Ready; not Ready: vllm-1-1")


def test_decide_holds_while_a_serving_pod_is_terminating_though_still_ready() -> None:
    """A group being deleted (a rollout, a scale-down, a repair) keeps Ready through its preStop: not serving."""
    going = pod("vllm-1", "n-p-b")
    going["metadata"]["deletionTimestamp"] = iso(NOW - 30)
    d = mg.decide(pools({"p-a": IN_50H, "p-b": None}), [SERVING[0], going], GATE, NOW, False)
    assert (d.action, d.severity) == ("hold", "WARNING")
    assert d.message.endswith("1 of 2 leaders Ready; not Ready: vllm-1")


def test_decide_holds_below_the_standing_groups() -> None:
    d = mg.decide(pools({"p-a": IN_50H, "p-b": None}), SERVING[:1], GATE, NOW, False)
    assert d.message.endswith("1 of 2 standing groups run")


@pytest.mark.parametrize("serving", [[], [pod("other-0", "n-p-a", lws="other")], [pod("vllm-0-1", "n-p-a", 1)]])
def test_decide_holds_when_it_finds_no_serving_group(serving: list[dict]) -> None:
    # an empty selector (no pod, another LWS's pods only, no leader) holds rather than proceeds
    d = mg.decide(pools({"p-a": IN_50H}), serving, GATE, NOW, True)
    assert d.action == "hold"
    assert d.message.endswith("0 of 2 standing groups Ready (no serving pod found)")


def test_decide_above_the_standing_groups_goes_ahead_only_while_the_scale_down_is_held() -> None:
    three = [*SERVING, pod("vllm-2", "n-p-c")]
    nodes = pools({"p-a": IN_50H, "p-b": None, "p-c": None})
    held = mg.decide(nodes, three, GATE, NOW, False)
    assert held.action == "hold"
    assert "3 groups run, above the 2 standing ones" in held.message
    assert "spec.behavior.scaleDown.selectPolicy: Disabled on vllm" in held.message
    assert mg.decide(nodes, three, GATE, NOW, True).action == "start"


def test_decide_pages_a_hold_within_the_due_window() -> None:
    d = mg.decide([*pools({"p-a": IN_2H}), node("n-p-c", "p-c", cordoned=True)], SERVING, GATE, NOW, False)
    assert (d.action, d.severity) == ("hold", "ERROR")
    assert d.pages == ("held within 86400 s of pool p-a's window (window opens in 7200 s)",)


def test_decide_a_pool_in_maintenance_holds_the_next_without_paging_until_two_hours_before_its_window() -> None:
    """The gate's own start holds the next pool: a WARNING while the next window is far, a page once they may meet."""
    started = node("n-p-c", "p-c", IN_50H, perform=True)
    far = mg.decide([*pools({"p-a": str(int(NOW + 22 * 3600))}), started], SERVING, GATE, NOW, False)
    assert (far.action, far.severity, far.pages) == ("hold", "WARNING", ())
    near = mg.decide([*pools({"p-a": IN_2H}), started], SERVING, GATE, NOW, False)
    assert (near.action, near.severity) == ("hold", "ERROR")
    assert near.pages == ("held within 7200 s of pool p-a's window (window opens in 7200 s)",)
    cordoned = mg.decide([*pools({"p-a": str(int(NOW + 22 * 3600))}), node("n-p-c", "p-c", cordoned=True)],
                         SERVING, GATE, NOW, False)  # fmt: skip
    assert cordoned.severity == "ERROR"  # another hold keeps the whole due window


def test_decide_picks_an_unreadable_window_last_and_never_pages_for_it() -> None:
    d = mg.decide(pools({"p-a": "soon", "p-b": IN_50H}), SERVING, GATE, NOW, False)
    assert d.pool == "p-b"
    held = mg.decide([node("n-p-a", "p-a", "soon"), node("c", "p-c", cordoned=True)], SERVING, GATE, NOW, False)
    assert (held.action, held.severity, held.pool) == ("hold", "WARNING", "p-a")
    assert "window unreadable" in held.message


def test_decide_pages_a_node_holding_a_serving_pod_lost_for_lost_seconds() -> None:
    lost = node("n-p-b", "p-b", ready=False, since=NOW - 601)
    d = mg.decide([node("n-p-a", "p-a"), lost], SERVING, GATE, NOW, False)
    assert (d.action, d.severity) == ("idle", "ERROR")
    assert d.pages == ("node n-p-b NotReady for 601 s holds a serving pod",)
    fresh = node("n-p-b", "p-b", ready=False, since=NOW - 599)
    assert mg.decide([fresh], SERVING, GATE, NOW, False).severity == "INFO"
    idle = node("n-p-c", "p-c", ready=False, since=NOW - 3600)  # no serving pod on it
    assert mg.decide([idle], SERVING, GATE, NOW, False).pages == ()


def test_decide_exempts_a_node_in_maintenance_for_six_hours_only() -> None:
    started = with_signal(node("n-p-b", "p-b", IN_2H, perform=True, ready=False, since=NOW - 3600),
                          {mg.STARTED_LABEL: str(int(NOW - 3700))})  # fmt: skip
    assert mg.decide([started], SERVING, GATE, NOW, False).pages == ()
    # SRE review round 27, m1: a bare perform label (one GKE never acted on stays for good) spares no page
    bare = node("n-p-b", "p-b", IN_2H, perform=True, ready=False, since=NOW - 3600)
    assert mg.decide([bare], SERVING, GATE, NOW, False).pages == ("node n-p-b NotReady for 3600 s holds a serving pod",)
    assert mg.in_maintenance(bare, NOW)  # still busy: it holds the start of another pool
    opened = node("n-p-b", "p-b", str(int(NOW - 3600)), ready=False, since=NOW - 3600)
    assert mg.decide([opened], SERVING, GATE, NOW, False).pages == ()
    capped = node("n-p-b", "p-b", IN_2H, perform=True, ready=False, since=NOW - 21600)
    assert mg.decide([capped], SERVING, GATE, NOW, False).pages == (
        "node n-p-b NotReady for 21600 s holds a serving pod",
    )


def test_decide_an_unreadable_maintenance_label_exempts_nothing() -> None:
    garbled = node("n-p-b", "p-b", "tomorrow", ready=False, since=NOW - 3600)
    d = mg.decide([garbled], SERVING, GATE, NOW, False)
    assert d.severity == "ERROR"
    assert d.pages == ("node n-p-b NotReady for 3600 s holds a serving pod",)


WATCH = dataclasses.replace(GATE, starts=False)


def test_decide_a_watching_gate_starts_nothing_and_pages_a_lost_node() -> None:
    """On pools that take no manual start the gate only watches (GKE review round 49, M1): a pending window that a
    starting gate would start is left to its window, and a lost serving node pages as before."""
    waiting = pools({"p-a": IN_50H, "p-b": IN_40H})
    d = mg.decide(waiting, SERVING, WATCH, NOW, False)
    assert (d.action, d.severity, d.nodes, d.pages) == ("watch", "INFO", (), ())
    assert d.message.endswith("which comes at its window: n-p-a, n-p-b")
    lost = node("n-p-b", "p-b", ready=False, since=NOW - 601)
    d = mg.decide([node("n-p-a", "p-a"), lost], SERVING, WATCH, NOW, False)
    assert (d.action, d.severity) == ("watch", "ERROR")
    assert d.pages == ("node n-p-b NotReady for 601 s holds a serving pod",)


def test_close_windows_tickets_two_serving_pools_whose_windows_could_meet() -> None:
    """SRE reviews round 12 and 13: a watching gate opens a ticket (a WARNING line, not a page) for two pools holding
    serving pods whose windows open closer than ``close_seconds``, naming the group to move; farther apart, a pool
    holding no serving pod, or a first window beyond ``due_seconds``, it does not."""
    close = dataclasses.replace(WATCH, close_seconds=7 * 3600)
    two = pools({"p-a": str(int(NOW + 40 * 3600)), "p-b": str(int(NOW + 44 * 3600))})
    due = dataclasses.replace(close, due_seconds=48 * 3600)
    d = mg.decide(two, SERVING, due, NOW, False)
    assert (d.action, d.severity, d.pages) == ("watch", "WARNING", ())
    (ticket,) = d.tickets
    assert ticket.startswith("pools p-a and p-b hold serving pods and their windows open 144000 s and 158400 s")
    assert "add a group and move the group of vllm-0 off p-a" in ticket
    assert mg.decide(two, SERVING, close, NOW, False).tickets == ()  # the first window beyond due_seconds (24 h)
    apart = pools({"p-a": str(int(NOW + 3600)), "p-b": str(int(NOW + 9 * 3600))})
    assert mg.decide(apart, SERVING, close, NOW, False).tickets == ()
    idle = pools({"p-a": str(int(NOW + 3600)), "p-c": str(int(NOW + 2 * 3600))})  # nothing serves on p-c
    assert mg.decide(idle, SERVING, close, NOW, False).tickets == ()


def test_close_windows_pages_on_the_outcome_of_the_windows_about_to_open() -> None:
    """SRE reviews round 13 and 14, M1: the page reads the outcome, not the maintenance under way (GKE removes a
    node's scheduled-maintenance-time label once its maintenance is active, and its pods go): with one standing
    group already down (its node unlabelled, its pod gone) and the other's window within 2 hours, no group would
    serve: it pages. Both standing groups' windows within 2 hours page too. One group's window alone does not (one
    group down for one maintenance is what the groups running allow), nor a window beyond 2 hours; with three groups
    running under load, two going page (SRE review round 15, M1)."""
    soon, later = str(int(NOW + 3600)), str(int(NOW + 3 * 3600))
    lost_one = [node("n-p-a", "p-a"), node("n-p-b", "p-b", soon)]  # p-a's maintenance under way: no label
    d = mg.decide(lost_one, [pod("vllm-1", "n-p-b")], WATCH, NOW, False)  # vllm-0's pod gone with its node
    assert (d.action, d.severity) == ("watch", "ERROR")
    (page,) = d.pages
    assert page.startswith("within 7200 s the maintenance windows of pools p-b take the groups of vllm-1")
    assert "1 of 2 groups are Ready now, 0 would serve; add a group now" in page
    both = mg.decide(pools({"p-a": soon, "p-b": soon}), SERVING, WATCH, NOW, False)
    assert both.severity == "ERROR" and "take the groups of vllm-0, vllm-1" in both.pages[0]
    assert mg.decide(pools({"p-a": soon, "p-b": None}), SERVING, WATCH, NOW, False).pages == ()
    assert mg.decide([node("n-p-a", "p-a"), node("n-p-b", "p-b", later)], [pod("vllm-1", "n-p-b")], WATCH, NOW,
                     False).pages == ()  # fmt: skip
    three = [*SERVING, pod("vllm-2", "n-p-c")]  # the HPA runs three under load: two going leave one of three
    loaded = mg.decide(pools({"p-a": soon, "p-b": soon, "p-c": None}), three, WATCH, NOW, False)
    assert loaded.severity == "ERROR" and "3 of 3 groups are Ready now, 1 would serve" in loaded.pages[0]
    assert mg.decide(pools({"p-a": soon, "p-b": None, "p-c": None}), three, WATCH, NOW, False).pages == ()


def test_close_windows_counts_an_opened_window_whose_node_still_serves() -> None:
    """SRE review round 26, M2: a window is the start of a period in which the maintenance may begin; a node whose
    window opened (its label's time past, or GKE's window taint on) and that still serves goes any time, so with
    another group's window within 2 hours the page comes. Once its maintenance took it (NotReady, or Ready again
    since its window), it is no longer counted as going."""
    opened, soon = str(int(NOW - 1800)), str(int(NOW + 3600))
    serving_opened = [node("n-p-a", "p-a", opened, since=NOW - 7200), node("n-p-b", "p-b", soon)]
    d = mg.decide(serving_opened, SERVING, WATCH, NOW, False)
    assert d.severity == "ERROR" and d.pages[0].startswith(
        "within 7200 s the maintenance windows of pools p-a, p-b take the groups of vllm-0, vllm-1"
    )
    tainted = mg.decide([with_signal(node("n-p-a", "p-a"), taint=mg.WINDOW_TAINT), node("n-p-b", "p-b", soon)],
                        SERVING, WATCH, NOW, False)  # fmt: skip
    assert tainted.severity == "ERROR" and "pools p-a, p-b" in tainted.pages[0]
    done = [node("n-p-a", "p-a", opened, since=NOW - 600), node("n-p-b", "p-b", soon)]  # Ready again since its window
    assert mg.decide(done, SERVING, WATCH, NOW, False).pages == ()
    assert mg.decide([serving_opened[0], node("n-p-b", "p-b")], SERVING, WATCH, NOW, False).pages == ()  # alone


def test_close_windows_does_not_count_a_surge_rollouts_group_as_running() -> None:
    """SRE review round 16, m1: a surge rollout's extra group (a third leader, loading) is above the groups the
    LeaderWorkerSet asks for (spec.replicas 2): one standing group's window within 2 hours leaves one of two serving,
    which the groups allow, so no page; read as three running, it paged 'add a group now'. Under load (spec.replicas
    3, three Ready) two going still page."""
    soon = str(int(NOW + 3600))
    rollout = [*SERVING, pod("vllm-2", "n-p-c", ready=False)]
    windows = pools({"p-a": soon, "p-b": None, "p-c": None})
    assert mg.decide(windows, rollout, WATCH, NOW, False, wanted=2).pages == ()
    unbounded = mg.decide(windows, rollout, WATCH, NOW, False)  # a caller that read no spec.replicas
    assert unbounded.severity == "ERROR" and "2 of 3 groups are Ready now, 1 would serve" in unbounded.pages[0]
    three = [*SERVING, pod("vllm-2", "n-p-c")]
    loaded = mg.decide(pools({"p-a": soon, "p-b": soon, "p-c": None}), three, WATCH, NOW, False, wanted=3)
    assert loaded.severity == "ERROR" and "3 of 3 groups are Ready now, 1 would serve" in loaded.pages[0]


def test_decide_with_surge_rollouts_starts_above_the_standing_groups_without_an_hpa_hold() -> None:
    """SRE review round 17, m2: with maxSurge 1 LWS keeps a group above a lower count while a lower one is not Ready,
    so the HPA's scale-down by one during the maintenance removes no serving group: three Ready groups above the
    standing two, scale-downs not held, start; with maxSurge 0 the gate still holds and pages within the due time."""
    in_20h = str(int(NOW + 20 * 3600))
    above = [*SERVING, pod("vllm-2", "n-p-c")]
    surge = dataclasses.replace(GATE, surge=1)
    starts = mg.decide(pools({"p-a": in_20h, "p-c": None}), above, surge, NOW, False)
    assert (starts.action, starts.severity, starts.pool) == ("start", "INFO", "p-a"), starts
    held = mg.decide(pools({"p-a": in_20h, "p-c": None}), above, GATE, NOW, False)
    assert (held.action, held.severity) == ("hold", "ERROR")


def test_decide_a_group_that_reloads_holds_without_paging_until_two_hours_before_the_window() -> None:
    """SRE review round 12, m5: after the gate's own pool comes back its group reloads (a leader not Ready), and a
    surge rollout runs a group not yet Ready: such holds pass by themselves, so they page only within
    IN_MAINTENANCE_DUE_SECONDS; a hold that waits on someone (the HPA's scale-down) keeps the whole due window."""
    in_20h = str(int(NOW + 20 * 3600))
    reloading = [pod("vllm-0", "n-p-a"), pod("vllm-1", "n-p-b", ready=False)]
    far = mg.decide(pools({"p-a": in_20h, "p-b": None}), reloading, GATE, NOW, False)
    assert (far.action, far.severity, far.pages) == ("hold", "WARNING", ())
    near = mg.decide(pools({"p-a": IN_2H, "p-b": None}), reloading, GATE, NOW, False)
    assert (near.action, near.severity) == ("hold", "ERROR")
    assert near.pages == ("held within 7200 s of pool p-a's window (window opens in 7200 s)",)
    surge = [*SERVING, pod("vllm-2", "n-p-c", ready=False)]
    assert mg.decide(pools({"p-a": in_20h, "p-c": None}), surge, GATE, NOW, False).severity == "WARNING"
    above = [*SERVING, pod("vllm-2", "n-p-c")]  # Ready, above the standing two, scale-down not held
    waits = mg.decide(pools({"p-a": in_20h, "p-c": None}), above, GATE, NOW, False)
    assert (waits.action, waits.severity) == ("hold", "ERROR")


def with_signal(base: dict, labels: dict | None = None, taint: str | None = None) -> dict:
    """``base`` (a node) with a label and a taint added."""
    meta = {**base["metadata"], "labels": {**base["metadata"]["labels"], **(labels or {})}}
    spec = {**base["spec"], **({"taints": [{"key": taint, "effect": "NoSchedule"}]} if taint else {})}
    return {**base, "metadata": meta, "spec": spec}


@pytest.mark.parametrize(
    ("labels", "taint"),
    [
        ({mg.ACTIVE_LABEL: "ONGOING"}, None),
        ({mg.ACTIVE_LABEL: "passthrough"}, None),
        (None, mg.WINDOW_TAINT),
    ],
    ids=["active-ongoing", "active-other-value", "maintenance-window-started"],
)
def test_in_maintenance_reads_gkes_own_signals(labels: dict | None, taint: str | None) -> None:
    """GKE review rounds 59 and 60, M1: a node GKE marks in maintenance is in maintenance, whatever the gate
    remembers: its loss does not page within the allowance, and it holds the start of another pool."""
    marked = with_signal(node("n-p-b", "p-b", ready=False, since=NOW - 1200), labels, taint)
    assert mg.in_maintenance(marked, NOW)
    assert mg.decide([marked], SERVING, WATCH, NOW, False).pages == ()
    held = mg.decide([node("n-p-a", "p-a", IN_40H), marked], SERVING, GATE, NOW, False)
    assert held.action == "hold" and "n-p-b (in maintenance, NotReady)" in held.message


def test_a_terminating_node_holds_the_next_pool_but_pages_when_lost() -> None:
    """GKE review round 60, m1; SRE review round 25, m4: ``impending-node-termination`` marks any termination, a
    preemption too: it holds the start of another pool, and spares no page."""
    terminating = with_signal(node("n-p-b", "p-b", ready=False, since=NOW - 1200), taint=mg.TERMINATION_TAINT)
    assert not mg.in_maintenance(terminating, NOW)
    assert mg.decide([terminating], SERVING, WATCH, NOW, False).pages == (
        "node n-p-b NotReady for 1200 s holds a serving pod",
    )
    ready = with_signal(node("n-p-b", "p-b"), taint=mg.TERMINATION_TAINT)
    held = mg.decide([node("n-p-a", "p-a", IN_40H), ready], SERVING, GATE, NOW, False)
    assert held.action == "hold" and "n-p-b (terminating)" in held.message


def _in_group(p: dict, group: int) -> dict:
    p["metadata"]["labels"][mg.GROUP_INDEX_LABEL] = str(group)
    return p


def test_decide_holds_while_a_standing_group_has_no_leader_beside_a_surge_group() -> None:
    """SRE review 37, M2: a surge rollout stalled on a standing group whose pods are refused (group 1 gone, surge
    group 2 Ready) left two Ready leaders, and a starting gate took group 0's pool days before its window."""
    surge = dataclasses.replace(GATE, surge=1)
    nodes = pools({"p-a": IN_50H, "p-b": None, "p-c": None})
    stalled = [_in_group(pod("vllm-0", "n-p-a"), 0), _in_group(pod("vllm-2", "n-p-c"), 2)]
    held = mg.decide(nodes, stalled, surge, NOW, False)
    assert (held.action, held.severity) == ("hold", "WARNING"), held
    assert held.message.endswith("no leader in group(s) vllm/1: a group is being recreated, or its pods are refused")
    whole = [*stalled, _in_group(pod("vllm-1", "n-p-b"), 1)]
    assert mg.decide(nodes, whole, surge, NOW, False).action == "start"
