"""The node upgrade runbook's hold of a starting host-maintenance gate (SRE review 35, M1): the runbook and the gate
each waited for every group Ready and then took a slice, so an upgrade session with a maintenance pending could take
two standing groups at once. The session sets the gate's state ConfigMap's ``upgrading`` key first (the gate's runs
go on, holding every start, so no *gate silent* page), waits until no pool the gate started is still in maintenance,
and removes the key last."""

from __future__ import annotations

from tpu_serving.common.naming import MAINTENANCE_GATE_STATE
from tpu_serving.operations.maintenance.gate_run import STARTED_KEY, UPGRADING_KEY
from tpu_serving_tools.runbook.names import Names


def gate_held(n: Names) -> list[str]:
    """The first steps of an upgrade session on a stack whose gate starts maintenance; none otherwise."""
    if not n.gate_starts:
        return []
    cm = f"kubectl -n {n.namespace} {{}} configmap {MAINTENANCE_GATE_STATE}"
    started = f"S=$({cm.format('get')} -o jsonpath='{{.data.{STARTED_KEY}}}')"
    return [
        "# The host-maintenance gate starts pools itself: hold its starts for the session, or it may start one while",
        "# a pool upgrades (its runs go on, holding; a window within its dueHours pages). Then wait until no pool it",
        "# started is still in maintenance:",
        f'{cm.format("patch")} --type merge -p \'{{"data":{{"{UPGRADING_KEY}":"node upgrades by hand"}}}}\'',
        f'until {started} && {{ [ -z "$S" ] || [ "$S" = \'{{}}\' ]; }}; do sleep 30; done',
    ]


def gate_released(n: Names) -> list[str]:
    """The last step of an upgrade session that held the gate's starts."""
    if not n.gate_starts:
        return []
    remove = f'[{{"op":"remove","path":"/data/{UPGRADING_KEY}"}}]'
    return [
        f"kubectl -n {n.namespace} patch configmap {MAINTENANCE_GATE_STATE} --type json -p '{remove}'"
        "   # the gate starts pools again"
    ]
