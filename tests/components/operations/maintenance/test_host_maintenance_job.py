"""The host-maintenance gate's component (:mod:`tpu_serving.operations.maintenance.host_maintenance_job`): its CronJob, RBAC, admission
policy and environment, which stacks get it (``hostMaintenance``), its pod in the quota, and its alerts
(:mod:`tpu_serving.operations.maintenance.host_maintenance`)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHIPPED, plan_of
from tests.fixtures.configs import GOOD, ROOT, load, plan_edited, plan_edited_once, with_change
from tpu_serving.common.naming import compute_class_name, maintenance_gate_metric
from tpu_serving.config import ConfigError, load_stack_config
from tpu_serving.config.checks import namespace_pods
from tpu_serving.config.serving_facts import maintenance_gate_runs
from tpu_serving.operations.maintenance import gate_run
from tpu_serving.operations.maintenance import host_maintenance as hm
from tpu_serving.operations.maintenance import host_maintenance_job as job
from tpu_serving.operations.maintenance import maintenance_gate as mg
from tpu_serving.operations.observability_settings import ObservabilitySettings
from tpu_serving.pools import compute_class
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.stack import rollout_summary
from tpu_serving_tools.preview.stack_files import load_project, stack_config

GATED = ("vllm-llama33-70b-existing", "vllm-llama33-70b-v5e16")
"""The shipped stacks whose serving keeps two or more standing LeaderWorkerSet groups on pools that take a manual
start (multi-host v5e 4x4): the gate starts the maintenance."""
WATCHED = ("vllm-llama33-70b-v6e8",)
"""The production example keeps two standing groups on single-host v6e 2x4 pools, for which Cloud TPU lists no
manual start: its gate only watches, and pages a lost serving node (GKE review round 49, M1)."""
GATE_STACK = "vllm-llama33-70b-v5e16"
NO_MANUAL_START = ("vllm-llama33-70b-disagg-v6e8x2", "vllm-llama33-70b-v6e8")
"""The shipped stacks whose serving slices are single-host v6e 2x4 pools (ct6e-standard-8t)."""
NO_MANUAL_START_ONE = ("vllm-llama31-405b-tpu7x16",)
"""The shipped stack whose one serving slice is a TPU7x pool, for which Cloud TPU lists no manual start."""
RESTART_AS_A_WHOLE = ("saxml-175b-v5e32x2", "pathwaysjob-batch-v6e16", "pathwaysjob-interactive-v5e16")
"""The JobSet and PathwaysJob stacks: any slice's disruption restarts every slice, so their pools start together."""
ARGS = job.HostMaintenanceGateArgs(
    namespace="serving",
    pools=("c-a", "c-b"),
    leader_worker_sets=("vllm",),
    fewest_groups=2,
    autoscalers=("vllm",),
    due_hours=12,
    labels={"app.kubernetes.io/part-of": "tpu-serving"},
)


def gate_objects(stack: str) -> dict[str, dict]:
    return {
        o["kind"]: o
        for o in kubernetes_objects(plan_of(stack))
        if o["metadata"]["name"]
        in (job.MAINTENANCE_GATE, f"{o['metadata'].get('namespace', '')}-host-maintenance-gate")
        or o["metadata"]["name"].endswith("-host-maintenance-gate")
    }


WATCH_KINDS = {"CronJob", "ServiceAccount", "ConfigMap", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}
"""A watching gate's objects: no admission policy, as it patches nothing."""


@pytest.mark.parametrize("stack", SHIPPED)
def test_gate_is_created_only_for_stacks_of_two_standing_lws_groups(stack: str) -> None:
    kinds = set(gate_objects(stack))
    if stack in GATED:
        assert kinds == WATCH_KINDS | {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
    elif stack in WATCHED:
        assert kinds == WATCH_KINDS
    else:
        assert kinds == set()


def test_gate_cron_job_of_a_gated_stack() -> None:
    objects = gate_objects(GATE_STACK)
    cron = objects["CronJob"]
    assert cron["metadata"]["namespace"] == "vllm-llama70b"
    spec = cron["spec"]
    assert (spec["schedule"], spec["concurrencyPolicy"]) == ("*/5 * * * *", "Replace")
    # GKE review round 53, m4: a node NotReady for LOST_SECONDS pages by the next run: within 15 minutes; a run ends
    # before the next one starts
    env = {e["name"]: e["value"] for e in spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert int(env["LOST_SECONDS"]) + 5 * 60 <= 15 * 60
    assert spec["jobTemplate"]["spec"]["activeDeadlineSeconds"] < 5 * 60
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "tpu-serving-online"
    assert pod["serviceAccountName"] == "host-maintenance-gate"
    (c,) = pod["containers"]
    assert c["image"] == "gcr.io/distroless/python3-debian13:nonroot"
    assert c["args"] == [
        "-m",
        "tpu_serving.gate_run",
    ]  # its files as the package tpu_serving under /gate
    volume = {v["name"]: v for v in pod["volumes"]}["program"]["configMap"]
    assert volume["items"] == [
        {"key": f, "path": f"tpu_serving/{f}"}
        for f in ("gate_run.py", "maintenance_gate.py", "gate_memory.py", "group_cover.py", "gate_fallback.py")
    ]
    sc = c["securityContext"]
    assert (sc["runAsNonRoot"], sc["runAsUser"], sc["readOnlyRootFilesystem"], sc["allowPrivilegeEscalation"]) == (
        True,
        65532,
        True,
        False,
    )
    assert c["resources"] == {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "64Mi"}}
    env = {e["name"]: e["value"] for e in c["env"]}
    assert env == {
        "POOLS": "vllm70b-v5e16,vllm70b-v5e16b,vllm70b-v5e16c,vllm70b-v5e16s",
        "NAMESPACE": "vllm-llama70b",
        "LEADER_WORKER_SETS": "vllm",
        "FEWEST_GROUPS": "2",
        "DUE_SECONDS": "86400",
        "LOST_SECONDS": "600",
        "MAINTENANCE_SECONDS": "21600",
        "AUTOSCALERS": "vllm",  # no hold needed with a surge (SRE 17, m2); the cover of a lost group (SRE 21, M1)
        "AUTOSCALER_BOUNDS": "vllm=2..3",  # the stack's own bounds, which the cover gives back (SRE 29, M3)
        "SURGE": "1",
        "CLOSE_SECONDS": "25200",
        "STARTS": "true",
        "STATE": "host-maintenance-gate-state",
        "SERVICE_ACCOUNT_DIR": "/var/run/secrets/kubernetes.io/serviceaccount",
        "PYTHONPATH": "/gate",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    assert objects["ConfigMap"]["data"] == job.program_files()
    assert set(job.program_files()) == {
        "gate_run.py",
        "maintenance_gate.py",
        "gate_memory.py",
        "group_cover.py",
        "gate_fallback.py",
    }


def test_program_files_run_as_the_cron_job_lays_them_out(tmp_path: Path) -> None:
    """The ConfigMap's files, each at its volume item's path, run with the CronJob's arguments and ``PYTHONPATH`` by
    an interpreter that cannot see the library (``-S``: no site-packages, as the distroless image has no
    tpu_serving): the program starts, imports its siblings, and reports the missing token as one JSON line."""
    objects = gate_objects(GATE_STACK)
    pod = objects["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    mount = container["volumeMounts"][0]["mountPath"]
    for item in {v["name"]: v for v in pod["volumes"]}["program"]["configMap"]["items"]:
        (tmp_path / item["path"]).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / item["path"]).write_text(objects["ConfigMap"]["data"][item["key"]])
    env = {e["name"]: e["value"].replace(mount, str(tmp_path)) for e in container["env"]}
    env["SERVICE_ACCOUNT_DIR"] = str(tmp_path / "no-token")
    done = subprocess.run(
        [sys.executable, "-S", *container["args"]], env=env, cwd="/", capture_output=True, text=True, timeout=60
    )
    (line,) = done.stdout.splitlines()
    assert (done.returncode, done.stderr) == (1, ""), done.stderr
    assert json.loads(line)["message"].startswith("the gate could not run: FileNotFoundError"), line


def test_gate_env_is_what_the_program_reads() -> None:
    gate = gate_run.gate_from(job.gate_env(ARGS))
    assert gate == mg.Gate(
        ("c-a", "c-b"), "serving", ("vllm",), 2, 12 * 3600, 600, 21600, ("vllm",), state="host-maintenance-gate-state"
    )


def test_gate_rbac_is_least_privilege() -> None:
    fixed = job.role(job.HostMaintenanceGateArgs(namespace="serving", pools=("c-a",), leader_worker_sets=("v",)))
    assert [r.resources for r in fixed.rules] == [["pods"], ["configmaps"]]  # no HPA, no HPA rule
    # SRE review round 21, m1: its state ConfigMap only, by name, read and patched
    state = fixed.rules[1]
    assert (state.verbs, state.resource_names) == (["get", "patch"], ["host-maintenance-gate-state"])
    role = job.role(ARGS)
    assert [(r.api_groups, r.resources, r.verbs, r.resource_names) for r in role.rules] == [
        ([""], ["pods"], ["list"], None),
        ([""], ["configmaps"], ["get", "patch"], ["host-maintenance-gate-state"]),
        (["autoscaling"], ["horizontalpodautoscalers"], ["get", "patch"], ["vllm"]),
    ]
    cluster = job.cluster_role(ARGS)
    assert cluster.metadata.name == "serving-host-maintenance-gate"
    assert [(r.api_groups, r.resources, r.verbs) for r in cluster.rules] == [([""], ["nodes"], ["list", "patch"])]
    binding = job.cluster_role_binding(ARGS)
    assert (binding.role_ref.kind, binding.role_ref.name) == ("ClusterRole", "serving-host-maintenance-gate")
    assert [(s.kind, s.name, s.namespace) for s in binding.subjects] == [
        ("ServiceAccount", "host-maintenance-gate", "serving")
    ]


def test_gate_admission_policy_matches_the_gate_updating_nodes() -> None:
    spec = job.admission_policy(ARGS).spec
    assert spec.failure_policy == "Fail"
    (rule,) = spec.match_constraints.resource_rules
    assert (rule.api_groups, rule.operations, rule.resources) == ([""], ["UPDATE"], ["nodes"])
    (condition,) = spec.match_conditions
    assert condition.expression == "request.userInfo.username == 'system:serviceaccount:serving:host-maintenance-gate'"
    binding = job.admission_binding(ARGS)
    assert (binding.spec.policy_name, binding.spec.validation_actions) == ("serving-host-maintenance-gate", ["Deny"])


def test_gate_admission_policy_expressions() -> None:
    (pools, label, rest) = [e for e, _ in job.validations(ARGS)]
    assert pools == (
        "has(oldObject.metadata.labels) && 'cloud.google.com/gke-nodepool' in oldObject.metadata.labels && "
        "oldObject.metadata.labels['cloud.google.com/gke-nodepool'] in ['c-a', 'c-b']"
    )
    perform = "'cloud.google.com/perform-maintenance'"
    assert label == (
        f"has(object.metadata.labels) && {perform} in object.metadata.labels && "
        f"object.metadata.labels[{perform}] == 'true' && object.metadata.labels.all(k, k == {perform} || "
        "(k in oldObject.metadata.labels && oldObject.metadata.labels[k] == object.metadata.labels[k])) && "
        "oldObject.metadata.labels.all(k, k in object.metadata.labels)"
    )
    assert rest == (
        "has(object.spec) == has(oldObject.spec) && (!has(object.spec) || object.spec == oldObject.spec) && "
        "has(object.metadata.annotations) == has(oldObject.metadata.annotations) && "
        "(!has(object.metadata.annotations) || object.metadata.annotations == oldObject.metadata.annotations)"
    )


def test_gate_arguments_refuse_no_pool() -> None:
    from tpu_serving.common.validation import ArgumentsError

    with pytest.raises(ArgumentsError, match=r"pools = \[\]: at least one serving node pool"):
        job.HostMaintenanceGate("g", job.HostMaintenanceGateArgs(namespace="serving", leader_worker_sets=("v",)))


def test_gate_env_names_the_compute_class_only_where_there_is_one() -> None:
    assert "COMPUTE_CLASS" not in job.gate_env(ARGS)
    classed = dataclasses.replace(ARGS, compute_class="c-serving")
    assert gate_run.gate_from(job.gate_env(classed)).compute_class == "c-serving"
    assert mg.CLASS_LABEL == compute_class.LABEL  # the program cannot import the library: one name, held equal here


def test_gate_arguments_refuse_a_compute_class_no_object_can_be_named() -> None:
    bad = dataclasses.replace(ARGS, compute_class="Serving_Class")
    assert [p for p in bad.problems() if p.startswith("compute_class")] == [
        "compute_class = 'Serving_Class': a ComputeClass's name must consist of lower-case letters, digits and '-', "
        "start with a letter and end with a letter or digit"
    ]


def test_gate_arguments_name_each_bad_value() -> None:
    """Library review 8, m6: the gate's problems gave the rule without the value given, as no other component's did."""
    from tpu_serving.common.validation import ArgumentsError

    args = job.HostMaintenanceGateArgs(
        namespace="serving", pools=("p",), leader_worker_sets=(), reload_seconds=-5, fewest_groups=0
    )
    with pytest.raises(ArgumentsError) as raised:
        job.HostMaintenanceGate("g", args)
    text = str(raised.value)
    assert "HostMaintenanceGateArgs.leader_worker_sets = []: at least one LeaderWorkerSet" in text, text
    assert "HostMaintenanceGateArgs.reload_seconds = -5: 0 or more" in text, text
    assert "HostMaintenanceGateArgs.fewest_groups = 0: at least 1" in text, text


@pytest.mark.parametrize("stack", GATED + WATCHED)
def test_gate_env_carries_the_bounds_the_stack_declares_for_its_hpa(stack: str) -> None:
    """SRE review round 29, M3: the cover gives back the stack's own bounds, the HPA's as the plan declares it (the
    same settings, :func:`tpu_serving.operations.autoscaling.declared_bounds`), never those the gate found when it began."""
    objects = kubernetes_objects(plan_of(stack))
    (hpa,) = [o for o in objects if o["kind"] == "HorizontalPodAutoscaler"]
    (container,) = gate_objects(stack)["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    spec = hpa["spec"]
    assert env["AUTOSCALER_BOUNDS"] == f"{hpa['metadata']['name']}={spec['minReplicas']}..{spec['maxReplicas']}"
    if stack != WATCHED[0]:
        return
    edited = plan_edited(stack, serving=lambda s: s["autoscaling"].update(minReplicas=3))  # 2..3 on this stack
    (cron,) = [o for o in kubernetes_objects(edited) if o["kind"] == "CronJob" and "gate" in o["metadata"]["name"]]
    (container,) = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert {e["name"]: e["value"] for e in container["env"]}["AUTOSCALER_BOUNDS"] == f"vllm=3..{spec['maxReplicas']}"


def test_gate_arguments_refuse_bounds_of_no_autoscaler_or_upside_down() -> None:
    stray = job.HostMaintenanceGateArgs("serving", ("a",), ("vllm",), autoscaler_bounds={"other": (2, 3)})
    assert stray.problems() == ["autoscaler_bounds: 'other' is not one of autoscalers"]
    upside = job.HostMaintenanceGateArgs(
        "serving", ("a",), ("vllm",), autoscalers=("vllm",), autoscaler_bounds={"vllm": (3, 2)}
    )
    assert upside.problems() == [
        "autoscaler_bounds['vllm'] = [3, 2]: [minimum, maximum], a minimum of 1 or more, at most the maximum"
    ]
    assert job.gate_env(job.HostMaintenanceGateArgs("s", ("a",), ("v",), autoscalers=("v",)))["AUTOSCALER_BOUNDS"] == ""


def test_gate_priority_class_defaults_to_none_and_the_stack_passes_the_serving_one() -> None:
    """A program's gate runs at the cluster's default priority: the serving PriorityClass exists only beside
    ``Tenancy``, and the API server refuses every run's pod for one that does not (library review 2, M5). The stack
    file's deployment, whose Tenancy creates it, passes the serving one (the gated stack's CronJob above)."""
    base = job.HostMaintenanceGateArgs("serving", pools=("a", "b"), leader_worker_sets=("vllm",))
    assert job.cron_job(base).spec.job_template.spec.template.spec.priority_class_name is None
    own = job.HostMaintenanceGateArgs(
        "serving", pools=("a", "b"), leader_worker_sets=("vllm",), priority_class_name="tpu-serving-online"
    )
    assert job.cron_job(own).spec.job_template.spec.template.spec.priority_class_name == "tpu-serving-online"


def test_ticket_mode_keeps_the_ticket_only() -> None:
    plan = plan_edited_once("vllm-llama33-70b-v5e16", hostMaintenance=lambda h: h.update(mode="ticket"))
    assert not [o for o in kubernetes_objects(plan) if o["metadata"]["name"] == job.MAINTENANCE_GATE]
    names = {r.name for r in plan.resources}
    assert "vllm70b-observability-host-maintenance" in names
    assert "vllm70b-observability-maintenance-gate" not in names


def test_due_hours_out_of_bounds_is_refused_with_its_key() -> None:
    with pytest.raises(ConfigError, match=r"hostMaintenance\.dueHours"):
        load(with_change("tpu-serving:hostMaintenance", {"dueHours": 0}))


def test_gated_fact_and_quota() -> None:
    assert not maintenance_gate_runs(load(GOOD))  # infrastructure only
    assert [p.name for p in namespace_pods(load(GOOD))] == []


@pytest.mark.parametrize("stack", GATED + WATCHED)
def test_gate_pod_is_counted_in_the_namespace_quota(stack: str) -> None:
    cfg = load_stack_config(stack_config(load_project(ROOT), stack))
    assert maintenance_gate_runs(cfg)
    assert "CronJob of the host-maintenance gate" in [p.name for p in namespace_pods(cfg)]


def test_unscheduled_filter_and_the_ticket_split_on_the_notice_type() -> None:
    page = hm.upcoming_filter("p", ["us-east5-a"], unscheduled=True)
    ticket = hm.upcoming_filter("p", ["us-east5-a"])
    assert ' AND protoPayload.metadata.type="UNSCHEDULED" AND (resource.labels.zone="us-east5-a")' in page
    assert ' AND NOT protoPayload.metadata.type="UNSCHEDULED" AND (resource.labels.zone="us-east5-a")' in ticket
    args = hm.unscheduled_policy_args("p", "c", ["us-east5-a"], ObservabilitySettings())
    assert (args.severity, args.display_name) == ("ERROR", "c: Unscheduled TPU host maintenance")


def test_gated_ticket_says_the_gate_starts_the_maintenance() -> None:
    assert "The stack's host-maintenance gate starts it" in hm.runbook(["us-east5-a"], gated=True)
    assert "Then start it yourself" in hm.runbook(["us-east5-a"])


def test_runbook_of_pools_without_a_manual_start_says_it_comes_at_its_window_and_when_to_move() -> None:
    """SRE review round 12, M2: the ticket of single-host pools does not say to start it, says when a move is worth
    it, and, where the gate watches, that it pages the close windows."""
    text = hm.runbook(["us-east5-a"], startable=False, watched=True)
    assert "start it yourself" not in text and "it comes at its window" in text
    assert "windows closer than a maintenance and a reload (7 hours)" in text
    assert "the stack's host-maintenance gate tickets that, naming the group" in text
    assert "compare the nodes' labels" in hm.runbook(["us-east5-a"], startable=False)
    plan = plan_of("vllm-llama33-70b-v6e8")
    ticket = [r for r in plan.resources if r.name == "vllm70bv6e-observability-host-maintenance"]
    assert [r.inputs["documentation"]["content"] for r in ticket] == [
        hm.runbook(["us-east5-a", "us-east5-b"], startable=False, watched=True)
    ]


def test_gate_page_filter_and_silent_alert() -> None:
    f = hm.gate_filter("c", "serving", errors=True)
    assert f == (
        'resource.type="k8s_container" AND resource.labels.cluster_name="c" AND '
        'resource.labels.namespace_name="serving" AND resource.labels.container_name="host-maintenance-gate" AND '
        'jsonPayload.gate="host-maintenance" AND severity>=ERROR'
    )
    alert = hm.silent_alert("c", "serving")
    assert alert.query == (
        "absent_over_time(logging_googleapis_com:user_c_serving_maintenance_gate_runs"
        '{monitored_resource="k8s_container",namespace_name="serving"}[20m])'
    )
    # SRE review round 21, M2: the gate is the fast signal of a lost serving VM; its silence pages, within four runs
    assert alert.severity.value == "ERROR"
    assert hm.SILENT_WINDOW_MINUTES == 4 * hm.GATE_MINUTES


def test_gate_run_metric_counts_completed_runs_only() -> None:
    """SRE review round 22, M1: a run that fails (the API unreachable, an HPA gone: ``decision: error``, logged as a
    WARNING) is not a run the silent alert may count, or a gate failing on every run would never page."""
    metric = hm.gate_metric_args("p", "c", "serving")
    assert metric.filter == hm.gate_filter("c", "serving") + ' AND NOT jsonPayload.decision="error"'
    assert str(metric.description).startswith("Completed runs")


def test_promql_name_maps_as_cloud_monitoring_documents() -> None:
    assert hm.promql_name("logging.googleapis.com/log_entry_count") == "logging_googleapis_com:log_entry_count"
    assert hm.promql_name("kubernetes.io/container/cpu/limit_cores") == "kubernetes_io:container_cpu_limit_cores"


def test_gate_metric_name_hashes_a_long_namespace() -> None:
    assert maintenance_gate_metric("c", "serving") == "c-serving-maintenance-gate-runs"
    long = maintenance_gate_metric("c" * 40, "n" * 63)
    assert len(long) <= 100
    assert long.startswith("c" * 40 + "-") and long.endswith("-maintenance-gate-runs") and "n" * 20 not in long


def test_gate_alerts_in_a_gated_plan() -> None:
    names = {r.name for r in plan_of(GATE_STACK).resources}
    for suffix in (
        "maintenance-gate",
        "maintenance-gate-silent",
        "maintenance-gate-runs-metric",
        "host-maintenance-unscheduled",
    ):
        assert f"vllm70b-observability-{suffix}" in names
    jetstream = {r.name for r in plan_of("llama31-405b-v6e16").resources}
    assert not any("maintenance-gate" in n for n in jetstream)
    assert any(n.endswith("-observability-host-maintenance-unscheduled") for n in jetstream)


@pytest.mark.parametrize("stack", SHIPPED)
def test_preview_maintenance_line_names_the_gate_exactly_where_it_runs(stack: str) -> None:
    """The preview's fact (:func:`tpu_serving.backends.rollout.maintenance_gated`) and the stack's
    (:func:`tpu_serving.config.serving_facts.maintenance_gated`) agree on every shipped stack."""
    (line,) = [x for x in rollout_summary(plan_of(stack).outputs) if x.startswith("Maintenance: ")]
    assert ("the stack's host-maintenance gate starts it" in line) == (stack in GATED)
    assert ("start it one pool at a time" in line) == (
        stack not in GATED + NO_MANUAL_START + NO_MANUAL_START_ONE + RESTART_AS_A_WHOLE
    )
    assert ("maintenance pending at once" in line) == (stack in RESTART_AS_A_WHOLE)  # SRE review 30, M2
    assert ("Cloud TPU lists no manual start for these pools" in line) == (stack in NO_MANUAL_START)
    assert ("Cloud TPU lists no manual start for this pool" in line) == (stack in NO_MANUAL_START_ONE)


def test_preview_maintenance_line_of_a_ticket_stack_says_to_start_it() -> None:
    plan = plan_edited_once("vllm-llama33-70b-v5e16", hostMaintenance=lambda h: h.update(mode="ticket"))
    (line,) = [x for x in rollout_summary(plan.outputs) if x.startswith("Maintenance: ")]
    assert "start it one pool at a time" in line and "host-maintenance gate" not in line


@pytest.mark.parametrize(
    ("machine", "topology", "listed"),
    [
        ("ct5lp-hightpu-4t", "4x4", True),  # GKE multi-host v5e 2x4 or larger
        ("ct6e-standard-4t", "4x4", True),  # GKE multi-host v6e
        ("ct6e-standard-8t", "2x4", False),  # one VM: a single-host pool, not listed
        ("ct5lp-hightpu-8t", "2x4", False),
        ("ct5p-hightpu-4t", "2x2x1", True),  # any v5p
    ],
)
def test_manual_start_listed_follows_cloud_tpu_limitations(machine: str, topology: str, listed: bool) -> None:
    from tpu_serving.catalog import slice_shape

    assert hm.manual_start_listed(slice_shape(machine, topology)) is listed


def test_gate_only_watches_on_single_host_pools_and_the_preview_says_so() -> None:
    """Two standing groups on single-host v6e 2x4 pools (the production example): the gate runs, starts nothing
    (STARTS false, nodes list only), it reads and patches its HPA (the cover of a lost group), and the Maintenance: line says the maintenance comes at its window
    and the gate pages a lost node; its page and silence alerts are in the plan."""
    cfg = load_stack_config(stack_config(load_project(ROOT), "vllm-llama33-70b-v6e8"))
    assert cfg.host_maintenance.mode == job.GateMode.START and maintenance_gate_runs(cfg)
    objects = gate_objects("vllm-llama33-70b-v6e8")
    (container,) = objects["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert (env["STARTS"], env["AUTOSCALERS"], env["FEWEST_GROUPS"]) == ("false", "vllm", "2")
    # the stack's capacity fallback: the gate watches the nodes of the pools GKE makes for its ComputeClass too
    assert env["COMPUTE_CLASS"] == compute_class_name(cfg.workload_identity.namespace) == "vllm-llama70b-serving"
    assert env["CLOSE_SECONDS"] == str(6 * 3600 + 3600)  # a maintenance of up to 6 h, and the startup window (1 h)
    assert [r["verbs"] for r in objects["ClusterRole"]["rules"]] == [["list"]]
    assert [r["resources"] for r in objects["Role"]["rules"]] == [
        ["pods"], ["configmaps"], ["horizontalpodautoscalers"], ["leaderworkersets"]
    ]  # fmt: skip
    assert objects["Role"]["rules"][2] == {  # by name: its own HPA, the cover of a lost group (SRE review 21, M1)
        "apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": ["get", "patch"],
        "resourceNames": ["vllm"],
    }  # fmt: skip
    assert objects["Role"]["rules"][3] == {  # by name, read only (SRE review round 16, m1)
        "apiGroups": ["leaderworkerset.x-k8s.io"], "resources": ["leaderworkersets"], "verbs": ["get"],
        "resourceNames": ["vllm"],
    }  # fmt: skip
    line = plan_of("vllm-llama33-70b-v6e8").outputs["rollout"]["maintenance"]
    assert "Cloud TPU lists no manual start for these pools" in line
    assert "host-maintenance gate starts none, but watches: it tickets such windows, and pages a node" in line
    names = {r.name for r in plan_of("vllm-llama33-70b-v6e8").resources}
    assert {"vllm70bv6e-observability-maintenance-gate", "vllm70bv6e-observability-maintenance-gate-silent"} <= names


def test_gate_page_says_where_to_go_for_a_lost_node() -> None:
    """SRE review round 48, m5: the page names the runbooks of a lost VM and a lost zone."""
    args = hm.gate_policy_args("p", "c", "serving", ObservabilitySettings())
    text = str(args.documentation.content)  # type: ignore[union-attr]
    assert "'A VM that goes silent'" in text and "'A zone outage'" in text
    assert "Never start a pool by hand while another is in maintenance" in text


def test_watching_gate_tickets_close_windows_and_pages_under_its_own_title() -> None:
    """SRE review round 13, M1: on the production example (a watching gate) close windows are a ticket of their own
    (WARNING, the ticket channels, the gate's watch WARNING lines), apart from the page, whose title does not say
    held; a starting gate's stack (v5e16) has no such ticket and keeps its title."""
    plan = plan_of("vllm-llama33-70b-v6e8")
    policies = {r.name: r.inputs for r in plan.resources if r.type == "gcp:monitoring/alertPolicy:AlertPolicy"}
    close = policies["vllm70bv6e-observability-maintenance-windows-close"]
    assert (close["displayName"], close["severity"]) == ("vllm70bv6e: TPU host maintenance windows close", "WARNING")
    assert close["notificationChannels"] == ["projects/tpu-serving-demo/notificationChannels/1234567891"]
    (condition,) = close["conditions"]
    assert condition["conditionMatchedLog"]["filter"].endswith(
        'jsonPayload.gate="host-maintenance" AND jsonPayload.decision="watch" AND severity=WARNING'
    )
    page = policies["vllm70bv6e-observability-maintenance-gate"]
    assert page["displayName"] == f"vllm70bv6e: {hm.WATCH_TITLE}" and page["severity"] == "ERROR"
    gated = {r.name: r.inputs for r in plan_of(GATE_STACK).resources}
    assert "vllm70b-observability-maintenance-windows-close" not in gated
    assert gated["vllm70b-observability-maintenance-gate"]["displayName"] == f"vllm70b: {hm.GATE_TITLE}"


def test_gate_state_config_map_starts_empty_and_is_the_gates_to_write() -> None:
    """SRE review round 21, m1: the windows the gate remembers live in a ConfigMap of their own, which the stack
    creates empty and never writes again (``ignoreChanges: [data]``), so that ``pulumi up`` does not erase them."""
    (state,) = [r for r in plan_of(GATE_STACK).resources if r.name.endswith("-maintenance-gate-state")]
    assert state.type == "kubernetes:core/v1:ConfigMap"
    assert state.inputs["metadata"]["name"] == "host-maintenance-gate-state"
    assert state.inputs["data"] == {"windows": "{}"}
    assert state.ignore_changes == ["data"]
