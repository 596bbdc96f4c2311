"""What the host-maintenance gate remembers between runs (:mod:`tpu_serving.operations.maintenance.gate_memory`): the windows GKE announced
and the pools the gate started, given back to the nodes before :func:`tpu_serving.operations.maintenance.maintenance_gate.decide`; a start GKE
did not act on."""

from __future__ import annotations

from tests.components.operations.maintenance.test_maintenance_gate import (
    GATE,
    IN_2H,
    NOW,
    SERVING,
    WATCH,
    node,
    with_signal,
)
from tpu_serving.operations.maintenance import gate_memory as gm
from tpu_serving.operations.maintenance import maintenance_gate as mg


def test_remember_windows_keeps_a_window_after_gke_removes_its_label() -> None:
    """SRE review round 21, m1: GKE's label is there only while the maintenance is scheduled and not active; a node
    NotReady in the maintenance it announced, its label gone, counts as in maintenance by the window remembered, and
    pages only after ``maintenance_seconds``; a window never remembered exempts nothing."""
    opened = NOW - 1800
    gone = node("n-p-b", "p-b", ready=False, since=NOW - 1200)  # no label: the maintenance is active
    nodes, remembered = gm.remember_windows([gone], {"n-p-b": (opened, NOW - 1500)}, NOW, 21600)
    assert remembered == {"n-p-b": (opened, NOW - 1500)}
    assert mg.in_maintenance(nodes[0], NOW) and not mg.pending(nodes[0], NOW)
    assert mg.decide(nodes, SERVING, WATCH, NOW, False).pages == ()
    assert mg.decide([gone], SERVING, WATCH, NOW, False).pages == (
        "node n-p-b NotReady for 1200 s holds a serving pod",
    )
    late = node("n-p-b", "p-b", ready=False, since=NOW - 21600)
    nodes, _ = gm.remember_windows([late], {"n-p-b": (opened, NOW - 1500)}, NOW, 21600)
    assert mg.decide(nodes, SERVING, WATCH, NOW, False).pages == (
        "node n-p-b NotReady for 21600 s holds a serving pod",
    )


def test_remember_windows_learns_labels_when_it_sees_them_and_forgets_old_windows() -> None:
    labelled = node("n-p-a", "p-a", IN_2H)
    old, recent = (NOW - 21601, NOW - 21700), (NOW - 60, NOW - 120)
    nodes, remembered = gm.remember_windows([labelled], {"n-old": old, "n-recent": recent}, NOW, 21600)
    assert remembered == {"n-p-a": (float(IN_2H), NOW), "n-recent": recent}  # n-old forgotten 6 h after it opened
    assert nodes == [labelled]  # a labelled node is left as it is
    waiting = node("n-p-c", "p-c")
    assert gm.remember_windows([waiting], {"n-p-c": (NOW + 600, NOW - 300)}, NOW, 21600)[1] == {}  # label gone early


def test_remember_windows_forgets_a_label_gone_before_its_window() -> None:
    """SRE review round 23, M1: the gate starts a pool's maintenance before its window (the perform label); GKE takes
    the scheduled label off; remembered, the window would exempt a real loss of that node for hours after it opened.
    Forgotten, the node NotReady after its maintenance pages as lost."""
    later = NOW + 3600
    started_early = node("n-p-b", "p-b", ready=False, since=NOW - 1200)  # label gone, window still ahead
    nodes, remembered = gm.remember_windows([started_early], {"n-p-b": (later, NOW - 1500)}, NOW, 21600)
    assert remembered == {} and nodes == [started_early]
    _, kept = gm.remember_windows([], {"n-p-b": (later, NOW - 1500)}, NOW, 21600)  # a node not listed keeps it
    assert kept == {"n-p-b": (later, NOW - 1500)}
    after = node("n-p-b", "p-b", ready=False, since=later + 600)
    nodes, _ = gm.remember_windows([after], remembered, later + 1800, 21600)
    assert mg.decide(nodes, SERVING, GATE, later + 1800, False).pages == (
        "node n-p-b NotReady for 1200 s holds a serving pod",
    )


def test_remember_windows_forgets_a_window_once_the_node_is_ready_again_after_its_label_went() -> None:
    """GKE review rounds 58 and 59, M1: the maintenance done (the node Ready again since a run last saw its label),
    a loss of the same VM within the next hours is a loss. A node that flapped while its label was still there
    (Ready again after the window opened, before the maintenance took it) keeps its window."""
    opened = NOW - 7200
    back = node("n-p-b", "p-b", ready=True, since=NOW - 600)
    assert gm.remember_windows([back], {"n-p-b": (opened, NOW - 3600)}, NOW, 21600)[1] == {}
    flapped = node("n-p-b", "p-b", ready=True, since=NOW - 5400)  # Ready again after the window, label still seen
    assert gm.remember_windows([flapped], {"n-p-b": (opened, NOW - 300)}, NOW, 21600)[1] == {
        "n-p-b": (opened, NOW - 300)
    }
    taken = node("n-p-b", "p-b", ready=False, since=NOW - 1200)  # then its maintenance takes it: exempt
    nodes, _ = gm.remember_windows([taken], {"n-p-b": (opened, NOW - 300)}, NOW, 21600)
    assert mg.decide(nodes, SERVING, WATCH, NOW, False).pages == ()
    lost_again = node("n-p-b", "p-b", ready=False, since=NOW - 1200)
    nodes, _ = gm.remember_windows([lost_again], {}, NOW, 21600)  # what the run after the forgetting sees
    assert mg.decide(nodes, SERVING, WATCH, NOW, False).pages == ("node n-p-b NotReady for 1200 s holds a serving pod",)


def test_remember_windows_keeps_a_window_while_a_late_maintenance_runs() -> None:
    """GKE review round 60, M1: a maintenance that takes the node down late in its window is remembered for
    ``keep_seconds`` from when the node went NotReady, not from the window's opening."""
    opened = NOW - 6 * 3600 - 60  # the window opened over 6 hours ago
    late = node("n-p-b", "p-b", ready=False, since=NOW - 3600)  # down for an hour, 5 hours into its window
    nodes, remembered = gm.remember_windows([late], {"n-p-b": (opened, NOW - 3700)}, NOW, 6 * 3600)
    assert remembered == {"n-p-b": (opened, NOW - 3700)}
    assert mg.decide(nodes, SERVING, WATCH, NOW, False).pages == ()
    assert gm.remember_windows([], {"n-p-b": (opened, NOW - 3700)}, NOW, 6 * 3600)[1] == {}  # its node gone


def test_remember_started_keeps_a_started_pool_busy_until_its_nodes_are_ready_again() -> None:
    """GKE review round 60, M1: a pool the gate started counts as in maintenance, perform label or not, until each of
    its nodes has been Ready since the start (or ``keep_seconds`` after it)."""
    t = NOW - 600
    draining = node("n-p-b", "p-b", ready=True, since=NOW - 7200)  # Ready since before the start: not yet down
    nodes, started = gm.remember_started([draining], {"p-b": t}, NOW, 21600)
    assert started == {"p-b": t} and mg.in_maintenance(nodes[0], NOW)
    down = node("n-p-b", "p-b", ready=False, since=NOW - 300)
    assert gm.remember_started([down], {"p-b": t}, NOW, 21600)[1] == {"p-b": t}
    back = node("n-p-b", "p-b", ready=True, since=NOW - 60)  # Ready again since the start: done
    nodes, started = gm.remember_started([back], {"p-b": t}, NOW, 21600)
    assert started == {} and not mg.in_maintenance(nodes[0], NOW)
    assert gm.remember_started([], {"p-b": t}, NOW, 21600)[1] == {"p-b": t}  # its nodes not listed: kept
    assert gm.remember_started([draining], {"p-b": NOW - 21601}, NOW, 21600)[1] == {}  # 6 hours at most


def test_ignored_starts_names_a_started_pool_whose_nodes_show_nothing_after_half_an_hour() -> None:
    """SRE review round 26, M1; GKE review round 61, m3: GKE's own signals, a node NotReady, or Ready again since the
    start each show that GKE acted; none of them for :data:`IGNORED_SECONDS` is a start GKE did not act on."""
    t = NOW - gm.IGNORED_SECONDS
    still = node("n-p-b", "p-b", perform=True, since=NOW - 7200)  # Ready since before the start, label still on
    assert gm.ignored_starts([still], {"p-b": t}, NOW) == {"p-b": t}
    assert gm.ignored_starts([still], {"p-b": t + 1}, NOW) == {}  # not yet half an hour
    acted = [
        node("n-p-b", "p-b", ready=False, since=NOW - 600),
        node("n-p-b", "p-b", since=NOW - 60),  # Ready again since the start
        with_signal(node("n-p-b", "p-b", since=NOW - 7200), {mg.ACTIVE_LABEL: "ONGOING"}),
        with_signal(node("n-p-b", "p-b", since=NOW - 7200), taint=mg.WINDOW_TAINT),
    ]
    assert [gm.ignored_starts([n], {"p-b": t}, NOW) for n in acted] == [{}, {}, {}, {}]
    assert gm.ignored_starts([], {"p-b": t}, NOW) == {}  # its nodes not listed: not judged
    two = [still, node("n-p-b2", "p-b", ready=False, since=NOW - 600)]  # one node of the slice went down
    assert gm.ignored_starts(two, {"p-b": t}, NOW) == {}


def test_remember_started_marks_the_started_nodes_for_the_decision_only() -> None:
    """SRE review round 26, m2: a node busy only by the gate's record is said so, not as GKE's maintenance."""
    t = NOW - 600
    nodes, _ = gm.remember_started([node("n-p-b", "p-b", since=NOW - 7200)], {"p-b": t}, NOW, 21600)
    assert nodes[0]["metadata"]["labels"][mg.STARTED_LABEL] == str(int(t))
    assert mg.PERFORM_LABEL not in nodes[0]["metadata"]["labels"]
    held = mg.decide([node("n-p-a", "p-a", IN_2H), nodes[0]], SERVING, GATE, NOW, False)
    assert "n-p-b (started by the gate 600 s ago, not Ready again since; the state ConfigMap's started)" in held.message
    labelled = with_signal(nodes[0], {mg.PERFORM_LABEL: "true"})  # the label still on: kubectl shows it
    assert (
        "n-p-b (in maintenance)"
        in mg.decide([node("n-p-a", "p-a", IN_2H), labelled], SERVING, GATE, NOW, False).message
    )
    ongoing = with_signal(nodes[0], {mg.ACTIVE_LABEL: "ONGOING"})
    assert (
        "n-p-b (in maintenance)" in mg.decide([node("n-p-a", "p-a", IN_2H), ongoing], SERVING, GATE, NOW, False).message
    )
