"""TPU host maintenance (:mod:`tpu_serving.operations.maintenance.host_maintenance`): the log-match filter and policy of the WARNING ticket,
the preview's ``Maintenance:`` line of every serving stack, and the policy in the flagship's plan."""

from __future__ import annotations

import pytest

from tests.conftest import STACKS, plan_of, resource
from tpu_serving.operations.maintenance import host_maintenance as hm
from tpu_serving.operations.maintenance.maintenance_line import zone_line
from tpu_serving.operations.observability_settings import ObservabilitySettings
from tpu_serving_tools.preview.stack import rollout_summary

PAGES = ["projects/p/notificationChannels/1"]
TICKETS = ["projects/p/notificationChannels/2"]


def test_upcoming_filter_holds_the_pending_notifications_of_the_zones() -> None:
    f = hm.upcoming_filter("my-proj", ["us-west4-b", "us-west4-a", "us-west4-a"])
    assert f.startswith('logName="projects/my-proj/logs/cloudaudit.googleapis.com%2Fsystem_event" AND ')
    assert 'resource.type="gce_instance"' in f
    assert 'protoPayload.methodName="compute.instances.upcomingMaintenance"' in f
    assert 'protoPayload.metadata.maintenanceStatus="PENDING"' in f
    assert f.endswith('(resource.labels.zone="us-west4-a" OR resource.labels.zone="us-west4-b")')


def test_policy_args_is_a_rate_limited_log_match_ticket() -> None:
    settings = ObservabilitySettings(notification_channels=PAGES, ticket_channels=TICKETS)
    args = hm.policy_args("my-proj", "vllm70b", ["us-west4-a"], settings)
    (condition,) = args.conditions
    assert condition.condition_matched_log.filter == hm.upcoming_filter("my-proj", ["us-west4-a"])
    assert condition.condition_prometheus_query_language is None
    assert args.alert_strategy.notification_rate_limit.period == "3600s"
    assert args.severity == "WARNING"
    assert args.notification_channels == TICKETS
    assert args.display_name == "vllm70b: TPU host maintenance scheduled"
    assert "cloud.google.com/scheduled-maintenance-time" in args.documentation.content
    assert 'docs/operate.md, "TPU host maintenance"' in args.documentation.content


def test_fallback_policy_args_tickets_the_gate_line_once_a_day() -> None:
    """SRE review of the capacity fallback, m5: the gate logs its line every 5 minutes while a group stays on a
    fallback slice, and an hourly limit renotified the ticket 24 times a day."""
    settings = ObservabilitySettings(notification_channels=PAGES, ticket_channels=TICKETS)
    args = hm.fallback_policy_args("my-proj", "vllm70b", "serving", settings)
    (condition,) = args.conditions
    assert 'jsonPayload.fallback:"on a fallback slice"' in condition.condition_matched_log.filter
    assert args.alert_strategy.notification_rate_limit.period == "86400s"
    assert (args.severity, args.notification_channels) == ("WARNING", TICKETS)
    assert "a flex-start slice's VMs go 7 days after they started at the latest" in args.documentation.content


@pytest.mark.parametrize(
    ("pools", "says"),
    [
        ([("a-pool", "us-east5-b")], "the only serving slice (a-pool, us-east5-b): its host maintenance stops"),
        (
            [("a", "us-west4-a"), ("b", "us-west4-a")],
            "all 2 serving slices are in us-west4-a: one zonal maintenance wave can take every group at once",
        ),
        (
            [("a", "us-west4-a"), ("b", "us-west4-b")],
            "the 2 serving slices span us-west4-a, us-west4-b: a zonal maintenance wave takes only the groups",
        ),
    ],
)
def test_zone_line_says_whether_one_wave_takes_every_group(pools: list[tuple[str, str]], says: str) -> None:
    line = zone_line(pools)
    assert line.startswith(says)
    assert line.endswith('(docs/operate.md, "TPU host maintenance")')


@pytest.mark.parametrize("stack", STACKS)
def test_rollout_summary_prints_a_maintenance_line_for_every_stack(stack: str) -> None:
    """Every serving backend (vLLM, JetStream, disaggregated, Saxml, PathwaysJob) fills the one line."""
    (line,) = [x for x in rollout_summary(plan_of(stack).outputs) if x.startswith("Maintenance: ")]
    assert "serving slice" in line and "cloud.google.com/scheduled-maintenance-time" in line


def test_observability_creates_the_ticket_on_the_serving_zones() -> None:
    plan = plan_of("vllm-llama33-70b-v5e16")
    policy = resource(plan, "gcp:monitoring/alertPolicy:AlertPolicy", "vllm70b-observability-host-maintenance")
    (condition,) = policy.inputs["conditions"]
    assert condition["conditionMatchedLog"]["filter"].endswith('(resource.labels.zone="us-west4-a")')
    assert policy.inputs["alertStrategy"] == {"notificationRateLimit": {"period": "3600s"}}
    assert "vllm70b: TPU host maintenance scheduled" in plan.outputs["alertPolicies"]


@pytest.mark.parametrize(
    ("stack", "name", "startable"),
    [
        ("vllm-llama33-70b-v5e16", "vllm70b", True),  # multi-host v5e 4x4: a manual start is listed
        ("vllm-llama33-70b-v6e8", "vllm70bv6e", False),  # single-host ct6e-standard-8t: none is
    ],
)
def test_unscheduled_policy_args_says_start_it_only_where_a_pool_takes_a_manual_start(
    stack: str, name: str, startable: bool
) -> None:
    policy = resource(
        plan_of(stack), "gcp:monitoring/alertPolicy:AlertPolicy", f"{name}-observability-{hm.UNSCHEDULED_KEY}"
    )
    text = policy.inputs["documentation"]["content"]
    assert ("start it now on a pool whose group can go" in text) is startable
    assert ("Cloud TPU lists no manual start for these pools" in text) is not startable
    assert policy.inputs["severity"] == "ERROR"


def test_zone_line_says_the_cover_of_a_group_in_maintenance_only_where_the_gate_covers() -> None:
    """SRE review round 25, m3: a group down for a maintenance is covered by a free slice, billed meanwhile."""
    pools = [("a", "us-west4-a"), ("b", "us-west4-b")]
    said = "a group whose pod stays on a node in maintenance is covered like a lost one"
    assert said in zone_line(pools, gated=True, watched=True, covered=True)
    assert "a from-zero pool's slice is billed meanwhile" in zone_line(pools, watched=True, covered=True)
    assert said not in zone_line(pools, gated=True, watched=True)


@pytest.mark.parametrize(
    ("stack", "covered"),
    [
        ("vllm-llama33-70b-v5e16", True),  # the gate starts the maintenance, on an HPA's groups
        ("vllm-llama33-70b-v6e8", True),  # the gate watches, on an HPA's groups
        ("vllm-llama31-405b-v6e16", False),  # no gate
    ],
)
def test_rollout_plan_maintenance_says_the_cover_where_the_gate_runs_on_an_hpa(stack: str, covered: bool) -> None:
    line = plan_of(stack).outputs["rollout"]["maintenance"]
    assert ("is covered like a lost one: the gate raises the HPA's minimum" in line) is covered


def test_zone_line_of_one_unstartable_pool_offers_no_move() -> None:
    """New-user review 11, m1: a single-pool stack's line told it to move a group when two serving pools' windows
    open close together; it has no second pool nor a slice to move to."""
    one = zone_line([("qwen7b-v6e1", "us-east5-b")], startable=False)
    assert "move a group" not in one and "there is no other serving slice to move the group to" in one
    two = zone_line([("a", "us-east5-a"), ("b", "us-east5-b")], startable=False)
    assert "move a group off its slice only when two serving pools' windows open" in two


def test_zone_line_of_a_workload_that_restarts_as_a_whole_starts_every_pool_at_once() -> None:
    """SRE review 30, M2: a JobSet's or PathwaysJob's slices restart together, so one pool at a time is one outage per
    pool; GKE's parallel strategy starts them all in one window."""
    pools = [("a", "us-west4-a"), ("b", "us-west4-a")]
    line = zone_line(pools, whole=True)
    assert "one pool at a time" not in line
    assert "start it on every serving pool with maintenance pending at once" in line
    assert "start it one pool at a time" in zone_line(pools)


@pytest.mark.parametrize("stack", ["saxml-175b-v5e32x2", "pathwaysjob-interactive-v5e16"])
def test_host_maintenance_ticket_of_a_workload_that_restarts_as_a_whole_starts_every_pool_at_once(stack):
    """SRE review 30, M2 (its follow-up): the ticket of the JobSet and PathwaysJob stacks still said to start the
    maintenance one node pool at a time, an outage per slice."""
    (ticket,) = [
        r.inputs["documentation"]["content"]
        for r in plan_of(stack).of_type("gcp:monitoring/alertPolicy:AlertPolicy")
        if r.name.endswith("-host-maintenance")
    ]
    assert (
        "on every serving pool with maintenance pending at once" in ticket and "one node pool at a time" not in ticket
    )


def test_host_maintenance_ticket_of_leaderworkerset_groups_keeps_one_pool_at_a_time():
    (ticket,) = [
        r.inputs["documentation"]["content"]
        for r in plan_of("vllm-llama33-70b-v5e16").of_type("gcp:monitoring/alertPolicy:AlertPolicy")
        if r.name.endswith("-host-maintenance")
    ]
    assert "with maintenance pending at once" not in ticket and "one serving pool at a time" in ticket


def test_unscheduled_page_of_one_group_says_it_stops_the_serving() -> None:
    """SRE reviews 31 m3, 32 m2, 33 m2: a single-group stack's page told the on-call to check that the other groups
    serve, though it has none."""
    page = hm.unscheduled_policy_args("p", "c", ["us-east5-b"], ObservabilitySettings(), True, whole=True)
    text = str(page.documentation.content)  # type: ignore[union-attr]
    assert "other groups" not in text and "the serving has no other group to keep answering" in text
    several = hm.unscheduled_policy_args("p", "c", ["us-east5-b"], ObservabilitySettings(), True)
    assert "check that the other groups serve" in str(several.documentation.content)  # type: ignore[union-attr]
    (one,) = [r for r in plan_of("vllm-llama31-405b-v6e16").resources if r.name.endswith("-unscheduled")]
    assert "the serving has no other group to keep answering" in one.inputs["documentation"]["content"]


def test_unscheduled_page_drains_only_the_stacks_pods() -> None:
    """SRE review 33, m1: the page's drain had no ``--pod-selector``; under the operators' RBAC it stopped Forbidden at
    another namespace's pod on the node."""
    page = hm.unscheduled_policy_args("p", "c", ["us-east5-b"], ObservabilitySettings(), False, workloads=("vllm",))
    text = str(page.documentation.content)  # type: ignore[union-attr]
    assert "--delete-emptydir-data --pod-selector 'leaderworkerset.sigs.k8s.io/name in (vllm)'`" in text
    (shipped,) = [r for r in plan_of("vllm-llama33-70b-v6e8").resources if r.name.endswith("-unscheduled")]
    assert "--pod-selector 'leaderworkerset.sigs.k8s.io/name in (vllm)'" in shipped.inputs["documentation"]["content"]
