"""``make e2e``: each stack's Kubernetes half applied by the real Pulumi engine to a real control plane that runs the
real controllers, then judged from the API server.

Per stack, in a control plane of its own (:class:`~.controlplane.ControlPlane`):

1. GKE's built-in CRDs, and kwok Nodes for the stack's node pools as GKE labels, taints and sizes them (from the
   stack's own offline plan: the pools an existing cluster would have), each pool at its autoscaling maximum. On GKE
   the cluster autoscaler adds a pool's slice when a group is Pending; it is not served by the Go module proxy
   (``k8s.io/autoscaler/cluster-autoscaler``: 403 on its version list and on v1.30.0 to v1.34.0, 2026-11-28), so
   the cluster starts as it is once every slice was added. A scale from zero is not exercised here;
2. the stack in existing-cluster mode (:mod:`.overlay`: every cloud resource named existing, the cluster reached
   with the control plane's kubeconfig, each controller's release manifest read from a local file rendered from
   its pinned Go module), ``pulumi up`` through the engine (:mod:`.stack_run`), while the real controller binaries
   stand in for the pods of the controller Deployments the stack itself installs (:mod:`.controllers`);
3. ``tpu-serving verify``'s checks (:mod:`tpu_serving_tools.verify`) against the API server;
4. the lifecycle (:mod:`.lifecycle`): a second ``preview --refresh`` with no change; for a stack with an HPA, the
   metric its HPA reads served by a stand-in adapter (:mod:`.metrics_adapter`: not the Stackdriver adapter) and
   written for its leaders before ``verify``, a scale
   from one group to two through the scale subresource, then ``preview --refresh`` and ``up --refresh`` that keep
   it, then a slice drain under the groups' disruption budget and a group moved off its slice (:mod:`.drain`); an engine image bump through
   ``pulumi up`` that every LeaderWorkerSet rolls to completion above the floor its ``rollout`` output promises
   (:mod:`.rollout`); for a stack with an HPA, the real HPA controller scaling the LeaderWorkerSet to its maximum
   on the metric written above target, and recommending a scale-down below it (:mod:`.autoscale`); and ``pulumi
   destroy`` leaving nothing behind.

Every step's findings are printed; the run fails on any failed finding. Nothing reaches a cloud.
"""

from __future__ import annotations

import functools
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tpu_serving_tools.reference.sources import reference_dir
from tpu_serving_tools.verify.checks import JOBSET_NAME_LABEL, Finding
from tpu_serving_tools.verify.expect import expectations_from

from .autoscale import LiveCluster, at_rest, hpa_scale, hpas, stack_metric
from .cloud import LoadBalancers
from .controllers import JOBSET, LWS, ControllerSpec, kubelet_stages, run_controller
from .controlplane import ControlPlane, toolchain_stages
from .coverage import left_out, model_platforms, shipped_stacks
from .crds import install_crds
from .drain import drain_one_group, move_one_group
from .lifecycle import HPA_TYPE, hpa_targets, inventory, scale_and_up, second_preview
from .metrics_adapter import STAND_IN, Adapter, start_adapter
from .nodes import create_plan_nodes, created_pools
from .rollout import image_rollout
from .stack_run import Engine, StackRun, engine_errors, project_dir


@dataclass
class StackReport:
    """What one stack's run found, and how long each step took."""

    stack: str
    findings: list[Finding] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and bool(self.findings) and all(f.ok for f in self.findings)

    def step(self, name: str, action: Callable[[], Any]) -> Any:
        began = time.monotonic()
        try:
            return action()
        finally:
            self.timings[name] = round(time.monotonic() - began, 1)


@dataclass
class Background:
    """A controller started in a thread once its Deployment's pod exists (the stack installs it during ``up``)."""

    spec: ControllerSpec
    cp: ControlPlane
    error: str = ""
    _thread: threading.Thread | None = None

    def start(self) -> Background:
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"controller-{self.spec.tool}")
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            run_controller(self.cp, self.spec, timeout=600.0)
        except Exception as err:  # reported with the stack's findings
            self.error = f"{type(err).__name__}: {err}"


def flat_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A stack file's ``config:`` as Pulumi hands it to the program: bare keys belong to the project."""
    return {(k if ":" in k else f"tpu-serving:{k}"): v for k, v in config.items()}


def api_client(kubeconfig: Path) -> Any:
    from kubernetes import config as kube_config

    return kube_config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]


def controllers_for(config: Mapping[str, Any]) -> list[ControllerSpec]:
    """The controllers a stack installs, by its backend."""
    backend = str((config.get("serving") or {}).get("backend", ""))
    if backend in ("saxml",):
        return [JOBSET]
    if backend in ("pathways-job",):
        return [JOBSET]
    return [LWS] if backend else []


CONTROLLER_SPECS = {"lws": LWS, "jobset": JOBSET}
MANIFEST_HOSTS = {
    "kubernetes-sigs/lws/": "lws",
    "kubernetes-sigs/jobset/": "jobset",
    "google/pathways-job/": "pathways-job",
}


def installed_controllers(plan: Mapping[str, Any]) -> list[str]:
    """The controllers whose release manifests a stack's plan applies (its ConfigGroups' files), and those it expects
    the cluster to run (``controllerInstalls``: ``existing``), which the run installs through the stack as well."""
    found = []
    for r in plan.get("resources") or []:
        out = r.get("registeredOutputs") or {}
        if r.get("type") == "tpu-serving:index:ControllerInstall" and out.get("owned") is False:
            found.append(str(out.get("controller")))
        if r.get("type") != "kubernetes:yaml/v2:ConfigGroup":
            continue
        for url in (r.get("inputs") or {}).get("files") or []:
            found += [name for host, name in MANIFEST_HOSTS.items() if host in str(url)]
    return sorted(set(found))


def serving_stages(folder: Path, probed: Sequence[str] = ()) -> list[Path]:
    """kwok's default Stages, with ``pod-complete`` kept from a JobSet's pods: kwok's default completes every pod a
    Job owns at once (``kustomize/stage/pod/fast/pod-complete.yaml``: Running pods owned by a Job), which is right
    for a one-off Job (the Saxml publisher, whose completion ``pulumi up`` waits for) but would end a Saxml or
    Pathways model server, which serves until it is stopped, and free its VM for the next pod. The pods of the
    ``probed`` namespaces are Ready when their controller's probe passes (:func:`.controllers.kubelet_stages`)."""
    out = []
    for stage in kubelet_stages(toolchain_stages(), folder, probed):
        if stage.name != "pod-complete.yaml":
            out.append(stage)
            continue
        doc = yaml.safe_load(stage.read_text())
        doc["spec"]["selector"]["matchExpressions"].append(
            {"key": f'.metadata.labels["{JOBSET_NAME_LABEL}"]', "operator": "DoesNotExist"}
        )
        folder.mkdir(parents=True, exist_ok=True)
        out.append(folder / stage.name)
        out[-1].write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def stack_config(root: Path, stack: str) -> dict[str, Any]:
    """The ``config:`` mapping of ``stacks/Pulumi.<stack>.yaml``."""
    from tpu_serving_tools.preview import strict_yaml

    data = strict_yaml.load(root / "stacks" / f"Pulumi.{stack}.yaml")
    return dict(data.get("config") or {})


def e2e_config(config: Mapping[str, Any], kubeconfig: Path, manifests: Mapping[str, str]) -> dict[str, Any]:
    """The stack in existing-cluster mode against the local control plane, with the release manifests the run has."""
    from .overlay import existing_cluster_overlay

    return existing_cluster_overlay(config, str(kubeconfig), manifests)


@dataclass(frozen=True)
class Setup:
    """What every stack's run shares: the project, the toolchain, the rendered manifests, a working folder."""

    root: Path
    tools: Mapping[str, Path]
    manifests: Mapping[str, str]
    work: Path

    @property
    def engine(self) -> Engine:
        return Engine(self.tools["pulumi"], self.tools["pulumi-kubernetes"])

    @classmethod
    def load(cls, root: Path, work: Path) -> Setup:
        """The toolchain's binaries (:func:`~.controlplane.load_toolchain`) and release manifests for ``root``."""
        from .controlplane import load_toolchain

        tools = dict(load_toolchain())
        tools.setdefault(
            "pulumi-kubernetes", tools.get("pulumi-resource-kubernetes", Path("pulumi-resource-kubernetes"))
        )
        return cls(root, tools, release_manifests(root), work)


def run_stack(
    setup: Setup,
    stack: str,
    edit: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    before_rollout: Callable[[Any], None] | None = None,
    lifecycle: Callable[[StackReport, StackRun, Any, Mapping[str, Any]], None] | None = None,
) -> StackReport:
    """One stack, start to end, in a control plane of its own; ``edit`` changes its stack file's ``config:`` first
    (a planted break: the offline plan, and so the Nodes, stay the shipped stack's); ``before_rollout`` changes the
    live cluster (given the API client) after ``pulumi up`` and before the image rollout, for a break that the stack
    file's validation would refuse; ``lifecycle`` (given the report, the stack, the API client and the e2e stack
    configuration) replaces the steps after the cluster is up (:func:`.canary.canary_lifecycle`)."""
    from tpu_serving_tools.preview.offline import preview_stacks

    report = StackReport(stack)
    previewed = preview_stacks(setup.root, [stack])
    if not previewed:
        report.error = f"the offline preview of {stack} failed"
        return report
    plan = previewed[0][1]
    wanted = installed_controllers(plan)
    missing = [c for c in wanted if c not in setup.manifests]
    if missing:
        report.error = f"no release manifest for {', '.join(missing)}: its module is not served (docs/development.md)"
        return report
    work = setup.work / stack
    shutil.rmtree(work, ignore_errors=True)  # a state of an earlier run names objects of an earlier cluster
    probed = [CONTROLLER_SPECS[c].namespace for c in wanted if c in CONTROLLER_SPECS]
    with ControlPlane(tools=setup.tools, stages=serving_stages(work / "stages", probed)) as cp:
        report.step("crds", lambda: install_crds(cp.kube))
        report.step("nodes", lambda: create_plan_nodes(cp, plan))
        shipped = stack_config(setup.root, stack)
        config = e2e_config(edit(shipped) if edit else shipped, cp.kubeconfig, {c: setup.manifests[c] for c in wanted})
        project = project_dir(work / "project", "tpu-serving", stack, config)
        api = api_client(cp.kubeconfig)
        adapter = report.step("metrics-adapter", functools.partial(_adapter, report, cp, plan))
        before = report.step("inventory", lambda: inventory(api))
        controllers = [Background(CONTROLLER_SPECS[c], cp).start() for c in wanted if c in CONTROLLER_SPECS]
        cp.at_stop(LoadBalancers(cp.kube).start().stop)
        run = StackRun(setup.engine, project, stack, setup.root / "__main__.py", work)
        run.kubeconfig = cp.kubeconfig
        pools = created_pools(plan)
        lowest = {p.name: p.lowest for p in pools}
        reserved = frozenset(p.name for p in pools if p.reserved)
        if lifecycle is not None:
            lifecycle(report, run, api, config)
        else:
            _lifecycle(report, run, api, (config, lowest, reserved), before, controllers, before_rollout, adapter)
    return report


def _adapter(report: StackReport, cp: ControlPlane, plan: Mapping[str, Any]) -> Adapter | None:
    """The stand-in metrics adapter (:mod:`.metrics_adapter`) for a stack with an HPA, said to be one; None
    without an HPA, or when it failed to start (a failed finding)."""
    if not any(r.get("type") == HPA_TYPE for r in plan.get("resources") or ()):
        return None
    try:
        adapter = start_adapter(cp)
    except Exception as err:  # the stand-in's own failure is the finding
        report.findings.append(Finding("metrics-adapter", "custom metrics API", False, f"{type(err).__name__}: {err}"))
        return None
    report.findings.append(Finding("metrics-adapter", "custom metrics API", True, STAND_IN))
    return adapter


def _lifecycle(
    report: StackReport,
    run: StackRun,
    api: Any,
    stack: tuple[Mapping[str, Any], Mapping[str, int], frozenset[str]],
    before: set[Any],
    bg: list[Background],
    before_rollout: Callable[[Any], None] | None = None,
    adapter: Adapter | None = None,
) -> None:
    from .lifecycle import left_behind, retained

    config, lowest, reserved = stack  # the e2e stack configuration; each pool's fewest VMs; the reserved pools
    try:
        up = report.step("up", run.up)
    except Exception as err:  # the engine's own message is the finding
        (run.work / "up.log").write_text(str(err))
        report.findings.append(Finding("up", "pulumi up", False, engine_errors(str(err))))
        report.findings += [Finding("controller", b.spec.tool, False, b.error) for b in bg if b.error]
        return
    report.findings.append(
        Finding("up", "pulumi up", True, ", ".join(f"{k} {v}" for k, v in sorted(up.counts.items())))
    )
    state = run.resources()
    flat = flat_config(config)
    expect = expectations_from(flat, state, "the e2e stack configuration")
    from tpu_serving_tools.verify import verify_expected

    cluster, metric = LiveCluster(api), stack_metric(config)
    if adapter is not None:  # the metric the HPAs read, at rest: they read it before verify judges them
        report.step("metrics", functools.partial(at_rest, cluster, adapter, state, metric))
    report.findings += report.step("verify", lambda: verify_expected(api, expect, wait=VERIFY_WAIT))
    report.findings.append(_verify_command(run, flat, state))
    report.findings.append(report.step("preview", lambda: second_preview(run)))
    targets = hpa_targets(state)
    if targets:  # the first HPA's: each scale is a preview and an up more
        report.findings += report.step("scale", functools.partial(scale_and_up, run, api, targets[0]))
        report.findings += report.step("drain", functools.partial(drain_one_group, api, targets[0]))
        report.findings += report.step("move", functools.partial(move_one_group, api, targets[0], lowest, reserved))
    if before_rollout is not None:
        before_rollout(api)
    report.findings += report.step("rollout", functools.partial(image_rollout, run, api, config))
    if adapter is not None:
        for hpa in hpas(state):
            report.findings += report.step("autoscale", functools.partial(hpa_scale, cluster, adapter, hpa, metric))
    report.step("destroy", run.destroy)
    after = report.step("inventory-after", lambda: inventory(api))
    report.findings.append(left_behind(before, after, retained(state)))


VERIFY_WAIT = 60.0
"""How long the checks are read again after ``pulumi up`` until they pass (``tpu-serving verify --wait``'s default):
the controllers keep working after the engine's last await."""


def _verify_command(run: StackRun, flat: Mapping[str, Any], state: Sequence[Mapping[str, Any]]) -> Finding:
    """``tpu-serving verify --plan P --kubeconfig K`` as a user runs it, with the deployed state as its plan: its
    exit status is a finding of its own (the checks above are its checks, run in this process), 0 to pass. A stack's
    HPAs pass it by reading their metric from the stand-in adapter (:mod:`.metrics_adapter`)."""
    import contextlib
    import io
    import json

    from tpu_serving_tools.verify import main as verify_main

    plan = run.work / "deployed-plan.json"
    plan.write_text(json.dumps({"stack": run.stack.name, "config": flat, "resources": list(state)}, default=str))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = verify_main(["--plan", str(plan), "--kubeconfig", str(run.kubeconfig), "--wait", "0"])
    printed = out.getvalue().strip().splitlines()
    summary = printed[-1:] or ["no output"]
    failed = sorted(line.split(":")[0] for line in printed if line.startswith("FAIL"))
    return Finding(
        "verify",
        "tpu-serving verify",
        status == 0,
        f"exit {status}: {summary[0]}" + (f"; failed {failed}" if failed else ""),
    )


def default_stacks(root: Path) -> list[str]:
    """Every stack of ``stacks/`` but those :func:`.coverage.left_out` names, and but the model stacks, which run in
    their platform stack's run (:mod:`.model_run`)."""
    left, models = left_out(root), model_platforms(root)
    return [s for s in shipped_stacks(root) if s not in left and s not in models]


def run_units(root: Path, stacks: Sequence[str]) -> list[str]:
    """The runs that take ``stacks``: a model stack is run in its platform stack's run (once for several)."""
    platforms = model_platforms(root)
    return list(dict.fromkeys(platforms.get(s, s) for s in stacks))


SHARED_PATHWAYS_JOB = Path("crds") / "pathwaysjob-v0.1.4-install.yaml"
"""PathwaysJob v0.1.4's release install manifest, in the project's reference folder (its module, named
``pathways-job``, is not served by the Go module proxy)."""


def release_manifests(root: Path) -> dict[str, str]:
    """Controller -> local release manifest: JobSet's and LeaderWorkerSet's as the toolchain rendered them (LWS
    v0.9.0, the newest its module proxy serves, in place of the v0.10.0 the stacks install: pin ``go-lws``);
    PathwaysJob's from the reference material when it is there."""
    from .controlplane import toolchain_files

    out = {}
    for name in ("jobset", "lws"):
        rendered = toolchain_files().get(f"{name}-manifests")
        if isinstance(rendered, str):
            out[name] = rendered
    pathways = (reference_dir(root.resolve()) / SHARED_PATHWAYS_JOB).resolve()
    if pathways.is_file():
        out["pathways-job"] = str(pathways)
    return out
