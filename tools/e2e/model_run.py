"""``make e2e``'s run of a platform stack with its model stacks side by side: one control plane, one state backend.

The platform (:func:`.overlay.platform_overlay`: its existing-cluster mode) goes up first and installs the
controllers, whose real binaries stand in for their pods (:mod:`.controllers`). Each model stack
(:func:`.overlay.model_overlay`) then reads the platform's ``platform`` output through its real StackReference, from
the same ``file://`` backend, reaches the cluster through ``platform.kubeconfig``, and goes up beside the others on
its own kwok slices (named ``existingNodePools``, as the run's Nodes carry them). Then, judged from the API server:

1. each stack's ``tpu-serving verify`` checks, its ``tpu-serving verify`` command, and a second ``preview
   --refresh`` with no change;
2. every model's route attached to the platform's one Gateway, its backends serving on their ports, and no two
   routes taking the same requests (:mod:`.routes`);
3. the platform's ``pulumi destroy`` refused while the models serve (``sharedPlatform.protect``), deleting nothing:
   every object of the platform and the models still there, no model pod recreated, the models' checks passing;
4. each model in turn destroyed while the platform and the other models stay (the same three judgements of them),
   then deployed again beside them; the routes judged once more;
5. the models destroyed, then ``pulumi state unprotect --all`` and the platform's ``pulumi destroy``, leaving nothing
   behind.

What it does not show: a Gateway controller (no route status is written and no request goes through a load
balancer), NetworkPolicy enforcement, the model stacks' own node pools and ``container.getCluster`` (named existing
and reached through a kubeconfig here), the platform's cloud resources (its existing-cluster mode), and a model
stack's scale, drain, rollout and HPA steps, which run for the self-contained stacks (:mod:`.run`).
"""

from __future__ import annotations

import functools
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpu_serving_tools.verify.checks import Finding
from tpu_serving_tools.verify.expect import Declared, declared_objects

from .lifecycle import HPA_TYPE, inventory, left_behind, retained, second_preview, up_finding
from .stack_run import StackRun, project_dir

if TYPE_CHECKING:
    from .metrics_adapter import Adapter
    from .run import Setup, StackReport

MODEL_CHECK_WAIT = 30.0
"""How long a remaining model's checks are read again after another model's destroy (seconds)."""


@dataclass
class Member:
    """One stack of the group: its name, shipped config, offline plan, e2e config and run."""

    stack: str
    shipped: Mapping[str, Any]
    plan: Mapping[str, Any]
    config: dict[str, Any] = field(default_factory=dict)
    run: StackRun | None = None
    state: list[dict[str, Any]] = field(default_factory=list)
    up: bool = False
    """Whether it is up (deployed, not destroyed since)."""


def model_stacks_of(root: Path, platform: str) -> list[str]:
    """The shipped stack files built on the platform stack ``platform``, by name."""
    from .coverage import model_platforms

    return [s for s, p in model_platforms(root).items() if p == platform]


def _prefixed(stack: str, findings: Sequence[Finding]) -> list[Finding]:
    return [Finding(f.check, f"{stack}: {f.subject}", f.ok, f.detail) for f in findings]


def still_there(subject: str, expected: set[Declared], live: set[Any]) -> Finding:
    """Every object of ``expected`` is live; fails on an empty ``expected`` (a state that declares nothing)."""
    gone = sorted(expected - live, key=str)
    detail = "; ".join(f"{k} {ns + '/' if ns else ''}{n}" for _, k, ns, n in gone[:12])
    ok = bool(expected) and not gone
    return Finding(
        "shared", subject, ok, f"{len(gone)} of {len(expected)} gone: {detail}" if gone else f"{len(expected)} live"
    )


def run_platform_group(setup: Setup, platform: str, models: Sequence[str]) -> StackReport:
    """The platform stack ``platform`` and its model stacks ``models`` on one control plane (module docstring)."""
    from tpu_serving_tools.preview.offline import preview_stacks

    from .run import StackReport, installed_controllers, stack_config

    report = StackReport(platform)
    names = [platform, *models]
    previewed = dict(preview_stacks(setup.root, names) or [])
    missing = [s for s in names if s not in previewed]
    if missing or not models:
        report.error = (
            f"the offline preview of {', '.join(missing)} failed" if missing else f"{platform}: no model stack"
        )
        return report
    members = [Member(s, stack_config(setup.root, s), previewed[s]) for s in names]
    wanted = installed_controllers(members[0].plan)
    absent = [c for c in wanted if c not in setup.manifests]
    if absent:
        report.error = f"no release manifest for {', '.join(absent)}: its module is not served (docs/development.md)"
        return report
    _run(setup, report, members, wanted)
    return report


def _run(setup: Setup, report: StackReport, members: list[Member], wanted: list[str]) -> None:
    from .cloud import LoadBalancers
    from .controlplane import ControlPlane
    from .crds import install_crds
    from .nodes import create_plan_nodes
    from .run import CONTROLLER_SPECS, Background, _adapter, api_client, e2e_config, serving_stages

    work = setup.work / members[0].stack
    shutil.rmtree(work, ignore_errors=True)  # a state of an earlier run names objects of an earlier cluster
    probed = [CONTROLLER_SPECS[c].namespace for c in wanted if c in CONTROLLER_SPECS]
    with ControlPlane(tools=setup.tools, stages=serving_stages(work / "stages", probed)) as cp:
        report.step("crds", lambda: install_crds(cp.kube))
        for m in members:
            report.step(f"nodes {m.stack}", functools.partial(create_plan_nodes, cp, m.plan))
            manifests = {c: setup.manifests[c] for c in wanted} if m is members[0] else {}
            m.config = e2e_config(m.shipped, cp.kubeconfig, manifests)
            project = project_dir(work / "project", "tpu-serving", m.stack, m.config)
            m.run = StackRun(setup.engine, project, m.stack, setup.root / "__main__.py", work)
            m.run.kubeconfig = cp.kubeconfig
        api = api_client(cp.kubeconfig)
        hpa_plan = next((m.plan for m in members if _has_hpa(m.plan)), None)
        adapter = report.step("metrics-adapter", lambda: _adapter(report, cp, hpa_plan)) if hpa_plan else None
        before = report.step("inventory", lambda: inventory(api))
        controllers = [Background(CONTROLLER_SPECS[c], cp).start() for c in wanted if c in CONTROLLER_SPECS]
        cp.at_stop(LoadBalancers(cp.kube).start().stop)
        if _platform_up(report, members[0], api):
            if all([_model_up(report, m, api, adapter) for m in members[1:]]):
                _side_by_side(report, cp, members, api)
            _take_down(report, members, api, before)
        report.findings += [Finding("controller", b.spec.tool, False, b.error) for b in controllers if b.error]


def _has_hpa(plan: Mapping[str, Any]) -> bool:
    return any(r.get("type") == HPA_TYPE for r in plan.get("resources") or ())


def _platform_up(report: StackReport, m: Member, api: Any) -> bool:
    """The platform's ``up``, its checks and a second preview (:func:`.platform_run.platform_lifecycle`'s first
    half); whether it is up."""
    from tpu_serving_tools.verify import verify_expected
    from tpu_serving_tools.verify.expect import expectations_of_resources

    from .platform_run import with_pods
    from .run import VERIFY_WAIT, StackReport

    assert m.run is not None
    own = StackReport(m.stack)
    m.up = up_finding(own, m.run)
    if m.up:
        m.state = m.run.resources()
        expect = with_pods(expectations_of_resources(m.state))
        own.findings += own.step("verify", lambda: verify_expected(api, expect, wait=VERIFY_WAIT))
        own.findings.append(own.step("preview", lambda: second_preview(m.run)))  # type: ignore[arg-type]
    _merge(report, own)
    return m.up


def _model_up(report: StackReport, m: Member, api: Any, adapter: Adapter | None) -> bool:
    """A model stack's ``up`` beside the platform, its checks, its ``tpu-serving verify`` and a second preview."""
    from tpu_serving_tools.verify import verify_expected
    from tpu_serving_tools.verify.expect import expectations_from

    from .autoscale import LiveCluster, at_rest, stack_metric
    from .run import VERIFY_WAIT, StackReport, _verify_command, flat_config

    assert m.run is not None
    own = StackReport(m.stack)
    m.up = up_finding(own, m.run)
    if m.up:
        m.state = m.run.resources()
        flat = flat_config(m.config)
        expect = expectations_from(flat, m.state, "the e2e stack configuration")
        if adapter is not None and _has_hpa(m.plan):  # the metric its HPA reads, at rest, before verify judges it
            own.step("metrics", functools.partial(at_rest, LiveCluster(api), adapter, m.state, stack_metric(m.config)))
        own.findings += own.step("verify", lambda: verify_expected(api, expect, wait=VERIFY_WAIT))
        own.findings.append(_verify_command(m.run, flat, m.state))
        own.findings.append(own.step("preview", lambda: second_preview(m.run)))  # type: ignore[arg-type]
    _merge(report, own)
    return m.up


def _side_by_side(report: StackReport, cp: Any, members: list[Member], api: Any) -> None:
    """The routes on the one Gateway; the platform's destroy refused while the models serve; each model destroyed
    in turn while the platform and the other models stay untouched, then deployed again beside them; the routes
    once more."""
    from .platform_run import refused_destroy
    from .routes import routes_served

    platform, models = members[0], members[1:]
    report.findings += report.step("gateway", lambda: routes_served(cp.kube, {m.stack: m.state for m in models}))
    assert platform.run is not None
    pods = pod_uids(cp.kube, models)
    protect = functools.partial(refused_destroy, platform.run, platform.state)
    report.findings += _prefixed(platform.stack, report.step("protect", protect))
    report.findings += _untouched(f"{platform.stack}'s refused destroy", members, api, cp.kube, pods)
    for m in models:
        others = [o for o in members if o is not m]
        pods = pod_uids(cp.kube, [o for o in models if o is not m])
        if not _destroy(report, m):
            return
        report.findings += _untouched(f"{m.stack}'s destroy", others, api, cp.kube, pods)
        if not _up_again(report, m):
            return
    served = functools.partial(routes_served, cp.kube, {m.stack: m.state for m in models})
    again = report.step("gateway again", lambda: until_ok(served, MODEL_CHECK_WAIT))
    report.findings += _prefixed("after each model's destroy and up", again)


def until_ok(
    check: Callable[[], list[Finding]],
    wait: float,
    interval: float = 5.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Finding]:
    """``check``'s findings, read again every ``interval`` seconds until they all pass or ``wait`` seconds have passed
    (the last read's): a model just deployed again has its pods made Ready by then, not at once."""
    deadline = clock() + wait
    while True:
        found = check()
        if all(f.ok for f in found) or clock() + interval > deadline:
            return found
        sleep(interval)


def standing(pod: Mapping[str, Any]) -> bool:
    """Whether ``pod`` stands until something replaces it: not a Job's (a CronJob's run, such as the host-maintenance
    gate's every 5 minutes, starts and ends on its schedule, and the CronJob's history limit deletes it, whatever
    another stack does: CI saw one gone across a platform's refused destroy)."""
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    return not any(o.get("kind") == "Job" for o in owners)


def pod_uids(kube: Any, members: Sequence[Member]) -> dict[str, set[tuple[str, str]]]:
    """Each member's standing pods (:func:`standing`), (name, uid), in the namespaces its state declares: a pod
    recreated under its old name (a LeaderWorkerSet's ``vllm-0``) has another uid."""
    out = {}
    for m in members:
        spaces = sorted(n for _, kind, _, n in declared_objects(m.state) if kind == "Namespace")
        out[m.stack] = {
            (p["metadata"]["name"], p["metadata"]["uid"])
            for ns in spaces
            for p in kube.list("v1", "Pod", ns)
            if standing(p)
        }
    return out


def same_pods(subject: str, before: set[tuple[str, str]], after: set[tuple[str, str]]) -> Finding:
    """No pod of ``before`` gone nor recreated; fails when there was none to compare."""
    changed = sorted({n for n, _ in before ^ after})
    detail = f"recreated or gone: {', '.join(changed[:8])}" if changed else f"{len(before)} pods, none recreated"
    return Finding("shared", subject, bool(before) and not changed, detail)


def _untouched(
    after: str, members: Sequence[Member], api: Any, kube: Any, pods: Mapping[str, set[tuple[str, str]]]
) -> list[Finding]:
    """After ``after``: every object each of ``members`` declares is live, the models' pods are the same ones, and
    the models pass their checks again."""
    from tpu_serving_tools.verify import verify_expected
    from tpu_serving_tools.verify.expect import expectations_from

    from .run import flat_config

    live, now = inventory(api), pod_uids(kube, [m for m in members if m.stack in pods])
    out = [still_there(f"{m.stack}'s objects after {after}", set(declared_objects(m.state)), live) for m in members]
    out += [same_pods(f"{stack}'s pods after {after}", before, now[stack]) for stack, before in pods.items()]
    for m in members:
        if m.stack not in pods:
            continue
        expect = expectations_from(flat_config(m.config), m.state, "the e2e stack configuration")
        found = verify_expected(api, expect, wait=MODEL_CHECK_WAIT)
        out += _prefixed(m.stack, _prefixed(f"after {after}", found))
    return out


def _up_again(report: StackReport, m: Member) -> bool:
    """A destroyed model stack's ``pulumi up`` beside the others again."""
    from .run import StackReport

    assert m.run is not None
    own = StackReport(m.stack)
    m.up = up_finding(own, m.run)
    own.findings = _prefixed("again", own.findings)
    own.timings = {f"{k} again": v for k, v in own.timings.items()}
    if m.up:
        m.state = m.run.resources()
    _merge(report, own)
    return m.up


def _destroy(report: StackReport, m: Member) -> bool:
    """``pulumi destroy`` of a member, a failed finding with the engine's message when it fails; whether it did."""
    from .stack_run import engine_errors

    assert m.run is not None
    try:
        report.step(f"destroy {m.stack}", m.run.destroy)
    except Exception as err:  # the engine's own message is the finding
        report.findings.append(Finding("destroy", f"{m.stack}: pulumi destroy", False, engine_errors(str(err))))
        return False
    m.up = False
    return True


def _take_down(report: StackReport, members: list[Member], api: Any, before: set[Any]) -> None:
    """Every model still up destroyed, then the platform unprotected (``pulumi state unprotect --all``, as
    docs/platform.md says) and destroyed; nothing left."""
    kept = set().union(*(retained(m.state) for m in members))
    for m in members[1:]:
        if m.up:
            _destroy(report, m)
    platform = members[0]
    assert platform.run is not None
    if platform.up:
        report.step("unprotect", platform.run.unprotect_all)
    _destroy(report, platform)
    report.findings.append(left_behind(before, inventory(api), kept))


def _merge(report: StackReport, own: StackReport) -> None:
    report.findings += _prefixed(own.stack, own.findings)
    report.timings.update({f"{k} {own.stack}": v for k, v in own.timings.items()})
    if own.error:
        report.error = "; ".join(filter(None, (report.error, f"{own.stack}: {own.error}")))
