"""tpu_serving.platform.maintenance: the cluster's maintenance policy. Settings GKE would refuse later are refused at
preview, with GKE's rule (issue "A platform team adopts it", item 9), in the stack file and in Python."""

from __future__ import annotations

import pytest

from tests.fixtures.configs import GOOD, load, with_change
from tests.fixtures.configs import stack_problems as problems
from tpu_serving.common.validation import ArgumentsError, check_arguments
from tpu_serving.platform.maintenance import (
    MaintenanceExclusion,
    MaintenanceSettings,
    recurrence_problem,
    worst_availability,
)


def maintenance(**m: object) -> dict:
    return with_change("tpu-serving:cluster/maintenance", m)


@pytest.mark.parametrize(
    ("rule", "hours", "expected"),
    [
        ("FREQ=WEEKLY;BYDAY=SA,SU", 6, 48),  # the default: 8 weekend nights in the worst 32 days
        ("FREQ=WEEKLY;BYDAY=SA", 6, 24),  # 4 Saturdays in the worst 32 days
        ("FREQ=DAILY", 4, 128),
        ("FREQ=DAILY", 3, 0),  # windows under four hours count for nothing
        ("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", 4, 88),  # 20 weekdays in 4 weeks + 2 in the worst 4 days (SA..TU)
    ],
)
def test_maintenance_availability_in_the_worst_32_days(rule, hours, expected):
    from datetime import timedelta

    assert worst_availability(rule, timedelta(hours=hours)) == timedelta(hours=expected)


def test_maintenance_default_window_is_accepted():
    assert load(GOOD).cluster.maintenance.recurrence == "FREQ=WEEKLY;BYDAY=SA,SU"


def test_maintenance_too_little_time_is_refused_with_the_gke_rule():
    (problem,) = [p for p in problems(maintenance(recurrence="FREQ=WEEKLY;BYDAY=SA")) if "maintenance" in p]
    assert problem.startswith("tpu-serving:cluster.maintenance: windowEnd = '2026-01-03T08:00:00Z': windows of 6 ")
    assert "24 hours of maintenance in the worst 32 days; GKE needs at least 48" in problem


def test_maintenance_window_must_end_after_it_starts():
    found = problems(maintenance(windowStart="2026-01-03T08:00:00Z", windowEnd="2026-01-03T02:00:00Z"))
    assert any("windowEnd = '2026-01-03T02:00:00Z': must be after windowStart 2026-01-03T08:00:00Z" in p for p in found)


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("FREQ=MONTHLY", "FREQ must be DAILY or WEEKLY"),
        ("FREQ=WEEKLY", "FREQ=WEEKLY needs BYDAY"),
        ("FREQ=WEEKLY;BYDAY=SA,XX", "FREQ=WEEKLY needs BYDAY"),
        ("FREQ=WEEKLY;BYDAY=SA,SA", "at most once"),
        ("FREQ=DAILY;BYDAY=SA", "BYDAY goes with FREQ=WEEKLY"),
        ("FREQ=DAILY;COUNT=3", "only FREQ and BYDAY are read here"),
    ],
)
def test_maintenance_recurrence_syntax(rule, why):
    assert why in recurrence_problem(rule)
    assert any(why in p and "recurrence" in p for p in problems(maintenance(recurrence=rule)))


def test_maintenance_exclusions_unique_names_and_no_upgrades_at_most_30_days():
    freeze = {"name": "freeze", "startTime": "2026-12-01T00:00:00Z", "endTime": "2026-12-20T00:00:00Z"}
    (twice,) = problems(
        maintenance(exclusions=[freeze, {**freeze, "startTime": "2027-02-01T00:00:00Z", "endTime": None}])
    )
    assert (
        twice
        == "tpu-serving:cluster.maintenance: exclusions: name 'freeze' is used twice (GKE keys exclusions by name)"
    )
    (long,) = problems(maintenance(exclusions=[{**freeze, "endTime": "2027-01-05T00:00:00Z", "scope": "NO_UPGRADES"}]))
    assert long == (
        "tpu-serving:cluster.maintenance.exclusions[0]: endTime = '2027-01-05T00:00:00Z': scope NO_UPGRADES lasts at "
        "most 30 days (GKE), this one 35 days from startTime 2026-12-01T00:00:00Z"
    )


def test_maintenance_exclusion_ends_after_it_starts():
    freeze = {"name": "freeze", "startTime": "2026-12-01T00:00:00Z"}
    for end in ("2026-06-30T00:00:00Z", "2026-12-01T00:00:00Z"):
        (backwards,) = problems(maintenance(exclusions=[{**freeze, "endTime": end}]))
        assert backwards == (
            f"tpu-serving:cluster.maintenance.exclusions[0]: endTime = '{end}': the exclusion must end after its "
            "startTime 2026-12-01T00:00:00Z"
        )
    load(maintenance(exclusions=[{**freeze, "endTime": "2026-12-01T00:00:01Z"}]))  # a second later: accepted


def test_maintenance_python_callers_see_python_names():
    with pytest.raises(ArgumentsError) as err:
        check_arguments(
            "MaintenanceSettings",
            MaintenanceSettings(window_start="2026-01-03T02:00:00Z", window_end="2026-01-03T03:00:00Z"),
            MaintenanceSettings,
        )
    (problem,) = err.value.problems
    assert "window_end = '2026-01-03T03:00:00Z': windows of 1 hours" in problem
    ok = MaintenanceExclusion(
        name="a", start_time="2026-12-01T00:00:00Z", end_time="2026-12-20T00:00:00Z", scope="NO_UPGRADES"
    )
    assert ok.problems() == []


def test_cluster_maintenance_exclusion_until_end_of_support():
    from tpu_serving.platform.maintenance import MaintenanceExclusion, MaintenanceSettings, maintenance_policy

    policy = maintenance_policy(
        MaintenanceSettings(exclusions=(MaintenanceExclusion(name="launch", start_time="2026-12-01T00:00:00Z"),))
    )
    assert policy["maintenance_exclusions"] == [
        {
            "exclusion_name": "launch",
            "start_time": "2026-12-01T00:00:00Z",
            "exclusion_options": {"scope": "NO_MINOR_OR_NODE_UPGRADES", "end_time_behavior": "UNTIL_END_OF_SUPPORT"},
        }
    ]
