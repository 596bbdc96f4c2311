"""config.production: what keeps a stack from a production SLO, refused with ``production: true`` and listed by the
preview's ``Production:`` line otherwise."""

import copy
import json

import pytest

from tests.conftest import ROOT, SHIPPED, plan_of
from tests.fixtures.configs import GOOD, HOLD_NODE_UPGRADES, PATHWAYS_JOB, SERVING, load, with_change, with_serving
from tpu_serving.backends.scaling import fewest_groups_gap
from tpu_serving.config import load_stack_config
from tpu_serving.config.errors import ConfigError
from tpu_serving.config.production import production_gaps, production_output
from tpu_serving_tools.preview.stack import production_summary
from tpu_serving_tools.preview.stack_files import load_project, stack_config

CHANNEL = "projects/tpu-serving-demo/notificationChannels/123"
TICKETS = "projects/tpu-serving-demo/notificationChannels/124"

PROD = {
    "gcp:project": "tpu-serving-demo",
    "gcp:region": "us-east5",
    "tpu-serving:zone": "us-east5-b",
    "tpu-serving:cluster": {"name": "prod", "maintenance": HOLD_NODE_UPGRADES},
    "tpu-serving:tpuSlices": [
        {
            "name": "a",
            "machineType": "ct6e-standard-8t",
            "topology": "2x4",
            "diskSizeGb": 300,
            "capacity": "reservation",
            "reservation": "v6e-a",
        },
        {
            "name": "b",
            "machineType": "ct6e-standard-8t",
            "topology": "2x4",
            "diskSizeGb": 300,
            "zone": "us-east5-a",
            "capacity": "any-reservation",
        },
    ],
    "tpu-serving:buckets": [{"purpose": "checkpoints", "workloadAccess": "read"}, {"purpose": "scratch"}],
    "tpu-serving:workloadIdentity": {"namespace": "prod"},
    "tpu-serving:observability": {"notificationChannels": [CHANNEL], "ticketChannels": [TICKETS]},
    "tpu-serving:serving": {
        "backend": "vllm",
        "slices": ["a", "b"],
        "replicas": 2,
        "model": "llama-3.3-70b-instruct",
        "servedModelName": "meta-llama/Llama-3.3-70B-Instruct",
    },
}
"""A stack with no gap: paged, ticketed apart, two single-host groups in two zones, each slice held by a
reservation."""


def _prod(path: str, value: object) -> dict:
    """:data:`PROD` with ``path`` changed (``...`` deletes it)."""
    return with_change(path, value, PROD)


def _autoscaled(min_replicas: int) -> dict:
    """:data:`PROD` with an HPA from ``min_replicas`` to two groups."""
    data = _prod("tpu-serving:serving/replicas", ...)
    data["tpu-serving:serving"]["autoscaling"] = {"minReplicas": min_replicas, "maxReplicas": 2}
    return data


def _keys(data: dict) -> list[str]:
    """The gaps of ``data`` run as an example (``production: false``), as ``key = value``."""
    return [f"{g.key} = {g.value}" for g in production_gaps(load({**data, "tpu-serving:production": False}))]


def test_production_gaps_name_nobody_paged_one_group_and_capacity():
    assert _keys(SERVING) == [
        "observability.unpaged = true",
        "serving.singleGroup = accepted",
        "tpuSlices[0].capacity = on-demand",
    ]


def test_production_gaps_name_a_stack_without_alerts():
    data = copy.deepcopy(SERVING)
    data["tpu-serving:observability"] = {"enabled": False}
    assert _keys(data)[0] == "observability.enabled = false"


def test_production_gaps_none_for_paged_single_host_groups_in_two_zones_on_reservations_and_without_serving():
    assert _keys(PROD) == []
    assert _keys(GOOD) == []


def test_production_gaps_name_a_minimum_of_one_group_of_several():
    data = _autoscaled(1)
    assert _keys(data) == ["serving.autoscaling.minReplicas = 1"]


def test_production_gaps_name_standing_groups_without_the_host_maintenance_gate():
    """SRE review round 22, M2: ``hostMaintenance.mode: ticket`` removes the gate, its 10-minute lost-VM page and its
    cover of a lost group, and production: true accepted it."""
    data = _prod("tpu-serving:hostMaintenance", {"mode": "ticket"})
    assert _keys(data) == ["hostMaintenance.mode = ticket"]
    (gap,) = production_gaps(load({**data, "tpu-serving:production": False}))
    assert "pages only as 'Serving groups below minimum', after observability.notReadyMinutes (75)" in gap.why
    assert _keys({**GOOD, "tpu-serving:hostMaintenance": {"mode": "ticket"}}) == []  # no serving: no gate to miss


def test_fallback_gap_names_a_capacity_fallback_no_gate_watches():
    """SRE review of the capacity fallback, M1: only the gate tickets a group on a fallback slice, so a fallback without
    it is a gap; with the gate (two standing groups, mode start) it is none."""
    data = _prod("tpu-serving:serving/fallback", ["spot"])
    assert _keys(data) == []
    ticket = with_change("tpu-serving:hostMaintenance", {"mode": "ticket"}, data)
    assert _keys(ticket) == ["hostMaintenance.mode = ticket", 'serving.fallback = ["spot"]']
    gap = production_gaps(load({**ticket, "tpu-serving:production": False}))[-1]
    assert "nothing tickets a group that serves on a fallback slice" in gap.why, gap.why


def test_production_gaps_name_every_serving_slice_in_one_zone():
    assert _keys(_prod("tpu-serving:tpuSlices/1/zone", ...)) == ["tpuSlices[].zone = us-east5-b"]


@pytest.mark.parametrize("capacity", ["on-demand", "spot", "flex-start"])
def test_production_gaps_name_a_serving_slice_no_reservation_holds(capacity: str):
    data = _prod("tpu-serving:tpuSlices/1/capacity", capacity)
    assert _keys(data) == [f"tpuSlices[1].capacity = {capacity}"]


def test_production_gaps_name_multi_host_vllm_groups():
    data = copy.deepcopy(PROD)
    for s in data["tpu-serving:tpuSlices"]:
        s.update(machineType="ct5lp-hightpu-4t", topology="4x4")
    assert _keys(data) == ['serving.slices = ["a", "b"]']


def _stack_keys(stack: str) -> list[str]:
    """The gaps of a shipped stack (each says ``production: false``), as ``key = value``."""
    return [f"{g.key} = {g.value}" for g in production_gaps(load_stack_config(stack_config(load_project(ROOT), stack)))]


def test_production_gaps_name_a_saxml_cell():
    assert _stack_keys("saxml-175b-v5e32x2")[:2] == ["observability.unpaged = true", "serving.singleGroup = accepted"]


@pytest.mark.parametrize(
    ("stack", "restarts"), [("pathwaysjob-batch-v6e16", "0"), ("pathwaysjob-interactive-v5e16", "3")]
)
def test_production_gaps_name_a_pathways_jobs_restarts(stack: str, restarts: str):
    assert _stack_keys(stack)[-1] == f"serving.maxRestarts = {restarts}"
    assert _keys(with_serving(PATHWAYS_JOB, maxRestarts=1))[-1] == "serving.maxRestarts = 1"


def test_production_gaps_name_the_disaggregated_modes_alpha_api_and_its_one_group_roles():
    assert _stack_keys("vllm-llama33-70b-disagg-v6e8x2")[-3:] == [
        "serving.disaggregation = set",
        "serving.disaggregation.prefill.autoscaling.minReplicas = 1",
        "serving.disaggregation.decode.autoscaling.minReplicas = 1",
    ]


def test_fewest_groups_gap_only_for_a_minimum_of_one_of_several():
    serving = load({**_autoscaled(1), "tpu-serving:production": False}).serving
    gap = fewest_groups_gap(serving)
    assert gap is not None and (gap.key, gap.value) == ("serving.autoscaling.minReplicas", "1")
    assert fewest_groups_gap(load(PROD).serving) is None
    assert (
        fewest_groups_gap(load({**SERVING, "tpu-serving:production": False}).serving) is None
    )  # one group at most: singleGroup's case


def test_production_problems_refuse_each_gap_at_its_key_with_production_true():
    data = _prod("tpu-serving:observability", {"unpaged": True})
    data["tpu-serving:tpuSlices"][1]["capacity"] = "spot"
    with pytest.raises(ConfigError) as err:
        load(data)
    problems = err.value.problems
    assert [p.split(":", 2)[1].split(" = ")[0] for p in problems] == ["observability.unpaged", "tpuSlices[1].capacity"]
    assert all("production: true refuses it" in p and "valid: true, false" in p for p in problems)


def test_production_problems_accept_a_stack_with_no_gap_by_default():
    assert load(PROD).production is True


def test_production_output_lists_the_gaps_of_an_example():
    out = production_output(load(SERVING))
    assert out["production"] is False
    assert [g.split(":")[0] for g in out["gaps"]] == [
        "observability.unpaged true",
        "serving.singleGroup accepted",
        "tpuSlices[0].capacity on-demand",
    ]


def test_production_summary_prints_the_gaps_of_an_example_and_a_yes_otherwise():
    lines = production_summary({"production": {"production": False, "gaps": ["a x: why", "b y: why"]}})
    assert lines == [
        "Production: no (production: false): 2 gap(s) keep it from a serving SLO",
        "  a x: why",
        "  b y: why",
    ]
    assert production_summary({"production": {"production": True, "gaps": []}})[0].startswith("Production: yes")
    assert production_summary({}) == []


def test_production_gaps_name_an_existing_clusters_node_upgrades_unless_held():
    keys = _stack_keys("vllm-llama33-70b-existing")
    assert "cluster.existing.nodeUpgradesHeld = false" in keys
    config = stack_config(load_project(ROOT), "vllm-llama33-70b-existing")
    cluster = json.loads(config["tpu-serving:cluster"])
    cluster["existing"]["nodeUpgradesHeld"] = True
    config["tpu-serving:cluster"] = json.dumps(cluster)
    held = [g.key for g in production_gaps(load_stack_config(config))]
    assert "cluster.existing.nodeUpgradesHeld" not in held and held


def test_production_output_of_a_model_stack_refuses_a_platform_that_does_not_hold_node_upgrades():
    """GKE review M1: a model stack's groups reload for an hour on its platform's cluster; its ``production`` output
    (computed once the platform's output is read) names the platform's ``nodeUpgradesHeld`` as a gap, refused with
    ``production: true``."""
    # without its route on the platform's Gateway, whose unprobed front door is a gap of its own (platform_probe_gap),
    # the shipped 70b model stack has no other gap and says production: true
    config = {k: v for k, v in stack_config(load_project(ROOT), "vllm-llama33-70b-platform").items()}
    config = {k: v for k, v in config.items() if k != "tpu-serving:gateway"} | {"tpu-serving:production": "true"}
    cfg = load_stack_config(config)
    assert cfg.production and production_output(cfg, platform_held=True)["gaps"] == []
    with pytest.raises(ValueError, match=r"^tpu-serving:platform\.stack = .*nodeUpgradesHeld false.*refuses it"):
        production_output(cfg, platform_held=False)
    gaps = production_output(cfg.model_copy(update={"production": False}), platform_held=False)["gaps"]
    assert [g for g in gaps if g.startswith("platform.stack ")], gaps


def test_production_output_of_the_shipped_stacks_one_production_example_and_examples_with_gaps():
    """GKE review round 41, M2: one shipped stack runs with production: true (single-host groups in two zones,
    reservations, paged alerts) and passes the gate; each other says production: false and has a gap to say why."""
    outputs = {s: plan_of(s).outputs["production"] for s in SHIPPED}
    assert {s for s, o in outputs.items() if o["production"]} == {"vllm-llama33-70b-v6e8"}
    assert outputs["vllm-llama33-70b-v6e8"]["gaps"] == []
    assert all(o["gaps"] for s, o in outputs.items() if not o["production"]), outputs


def test_production_example_makes_its_own_nat_and_proxy_only_subnet_in_its_own_network():
    """GKE review round 42 m1, SRE M1: the production example used a demo stack's Cloud NAT and proxy-only subnet, so
    destroying the demo cut its nodes' image pulls and its Gateway; it now has a network of its own."""
    plan = plan_of("vllm-llama33-70b-v6e8")
    (nat,) = plan.of_type("gcp:compute/routerNat:RouterNat")
    (router,) = plan.of_type("gcp:compute/router:Router")
    (subnet,) = plan.of_type("gcp:compute/subnetwork:Subnetwork")
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert router.inputs["network"] == subnet.inputs["network"] == cluster.inputs["network"] == "tpu-serving-prod"
    assert subnet.inputs["purpose"] == "REGIONAL_MANAGED_PROXY" and nat.inputs["router"]
    others = {s: plan_of(s).of_type("gcp:container/cluster:Cluster") for s in SHIPPED if s != "vllm-llama33-70b-v6e8"}
    assert all(c.inputs["network"] != "tpu-serving-prod" for cs in others.values() for c in cs)


def test_production_gaps_name_tickets_that_go_to_the_pages_channels():
    """SRE review: with ticketChannels empty the WARNING alerts fall back to the page channels, so tickets wake the
    pager; a ticket channel that is also a page channel does the same."""
    assert _keys(_prod("tpu-serving:observability/ticketChannels", ...)) == ["observability.ticketChannels = []"]
    assert _keys(_prod("tpu-serving:observability/ticketChannels", [TICKETS, CHANNEL])) == [
        f"observability.ticketChannels = {CHANNEL}"
    ]
    # no ticket gap when nothing pages (the unpaged gap's case) or the alert policies are not the stack's
    unpaged = _prod("tpu-serving:observability", {"unpaged": True})
    assert _keys(unpaged) == ["observability.unpaged = true"]
    elsewhere = _prod("tpu-serving:observability", {"cloudResources": "existing", "notificationChannels": [CHANNEL]})
    assert _keys(elsewhere) == []


def test_production_problems_refuse_tickets_on_the_pagers_channels_at_their_key():
    with pytest.raises(ConfigError) as err:
        load(_prod("tpu-serving:observability/ticketChannels", ...))
    (problem,) = err.value.problems
    assert problem.startswith("tpu-serving:observability.ticketChannels = []: ")
    assert "tickets wake the pager" in problem and "production: true refuses it" in problem


def test_production_example_tickets_apart_from_its_pages():
    """The production example names a ticket channel beside its page channel, and its WARNING policies notify it."""
    plan = plan_of("vllm-llama33-70b-v6e8")
    page, ticket = (f"projects/tpu-serving-demo/notificationChannels/123456789{i}" for i in (0, 1))
    policies = plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy")
    warnings = [p for p in policies if p.inputs["severity"] == "WARNING"]
    assert warnings and all(p.inputs["notificationChannels"] == [ticket] for p in warnings)
    assert all(p.inputs["notificationChannels"] == [page] for p in policies if p.inputs["severity"] != "WARNING")


def test_platform_probe_gap_names_a_model_stacks_route_on_the_platform_gateway():
    """SRE review, Blocker: the 70B model stack's preview said "Production: yes" while its probe does not go through
    the platform's Gateway; the gap says so, and its stack file says production: false."""
    gap = "platform.stack = my-org/tpu-serving/platform-us-east5"
    assert _stack_keys("vllm-llama33-70b-platform") == [gap]
    assert gap in _stack_keys("vllm-llama31-8b-platform")
    assert not [k for k in _stack_keys("vllm-llama33-70b-v6e8") if k.startswith("platform.")]
    assert plan_of("vllm-llama33-70b-platform").outputs["production"]["production"] is False


@pytest.mark.parametrize("stack", ["vllm-llama31-405b-v6e16", "vllm-llama33-70b-v5e16", "pathwaysjob-batch-v6e16"])
def test_production_gaps_say_of_each_slices_capacity_what_capacity_obtained_says(stack: str) -> None:
    """One stack with a capacity fallback, one with slices that start empty or may go down to zero, one with a job's
    slice: the Production line's capacity gap of a slice is the capacity.obtained output's text for it (new-user
    review of issue 37 item 2, M1: the two disagreed)."""
    cfg = load_stack_config(stack_config(load_project(ROOT), stack))
    outputs = plan_of(stack).outputs
    by_name = [s.name for s in cfg.tpu_slices]
    gaps = [g for g in production_gaps(cfg) if g.key.endswith("].capacity")]
    assert gaps
    for g in gaps:
        name = by_name[int(g.key.split("[")[1].split("]")[0])]
        value, _, said = outputs["capacity"]["obtained"][name].partition(": ")
        # why it is a gap, then the same text (new-user review of the fallback, m6: it read as good news alone)
        assert (
            g.value == value
            and g.why == f"no reservation holds its slice (capacity: reservation would); meanwhile {said}"
        )
