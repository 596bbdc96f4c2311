"""Check a deployed stack on its cluster, read-only: every object the plan declares exists, the controllers made
their objects (a LeaderWorkerSet's headless Service and pods, a JobSet's Jobs and headless Service, a DisaggregatedSet's
LeaderWorkerSets), every pod is scheduled and Ready, every TPU pod fills a VM of one of the stack's pools and every
multi-host group whole slices, every Service, InferencePool, PodMonitoring, PodDisruptionBudget, NetworkPolicy and
HorizontalPodAutoscaler selects or resolves something, every HPA computes a replica count from its metric, and every
LeaderWorkerSet has rolled its groups to its latest revision (:mod:`.revisions`).

``tpu-serving verify --stack S --kubeconfig K``: after ``pulumi up`` on GKE, or against the local control plane of
``make e2e``. It previews the stack offline for its plan (or reads ``--plan``), then reads the cluster with ``get``
and ``list`` calls only. Exit status 1 when a check fails, 2 when the stack, plan or cluster cannot be read.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .checks import Finding, run_all
from .expect import Expectations, expectations
from .revisions import rollouts
from .snapshot import ClusterUnreadable, read


def verify(api_client: Any, plan: Mapping[str, Any], wait: float = 0.0) -> list[Finding]:
    """Every check of ``plan``'s stack against the cluster of ``api_client`` (a ``kubernetes.client.ApiClient``),
    read again until they pass or ``wait`` seconds have passed."""
    expect = expectations(plan)
    return verify_expected(api_client, expect, wait)


def verify_expected(
    api_client: Any,
    expect: Expectations,
    wait: float = 0.0,
    interval: float = 5.0,
    judge: Callable[[Finding], Finding] | None = None,
) -> list[Finding]:
    """The checks, read again every ``interval`` seconds until they all pass or ``wait`` seconds have passed (the
    last read's findings): right after ``pulumi up`` the controllers are still at work, e.g. an HPA reports its
    target's replicas at its first sync, up to 15 s later (kube-controller-manager
    ``--horizontal-pod-autoscaler-sync-period``, default 15s). ``judge`` re-reads each finding against what a
    cluster without some component is expected to show (``make e2e``: no metrics API)."""
    deadline = time.monotonic() + wait
    while True:
        snapshot = read(api_client, expect.namespaces, expect.declared)
        findings = run_all(snapshot, expect.namespaces, expect.pools, expect.declared, expect.serving, expect.classes)
        findings += rollouts(snapshot, expect.namespaces)
        if judge is not None:
            findings = [judge(f) for f in findings]
        if all(f.ok for f in findings) or time.monotonic() + interval > deadline:
            return findings
        time.sleep(interval)


def report(findings: Sequence[Finding], verbose: bool) -> tuple[list[str], bool]:
    """The lines to print (failures always; passes with ``verbose``) and whether everything passed."""
    failed = [f for f in findings if not f.ok]
    lines = [f.line() for f in findings if verbose or not f.ok]
    by_check: dict[str, list[int]] = {}
    for f in findings:
        counts = by_check.setdefault(f.check, [0, 0])
        counts[0] += f.ok
        counts[1] += 1
    lines.append("  ".join(f"{check} {ok}/{n}" for check, (ok, n) in by_check.items()))
    return lines, not failed and bool(findings)


def _plan(args: argparse.Namespace) -> Mapping[str, Any] | None:
    from tpu_serving_tools.check import PlanFileError, read_plan

    if args.plan is not None:
        try:
            return read_plan(args.plan)
        except PlanFileError as err:
            print(f"error: {err}", file=sys.stderr)
            return None
    from tpu_serving_tools.preview.offline import preview_stacks

    previewed = preview_stacks(args.root.resolve(), [args.stack])
    return previewed[0][1] if previewed else None


def main(argv: list[str] | None = None) -> int:
    from tpu_serving_tools.cli import command_parser

    parser = command_parser(__name__, __doc__)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--stack",
        help="the stack (stacks/Pulumi.<stack>.yaml, or Pulumi.<stack>.yaml beside a program), previewed offline for its plan",
    )
    which.add_argument("--plan", type=Path, help="a plan.json written by tpu-serving preview")
    parser.add_argument(
        "--kubeconfig", type=Path, help="the cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config)"
    )
    parser.add_argument("--context", help="the kubeconfig context (default: its current context)")
    parser.add_argument("--root", type=Path, default=Path("."), help="the project folder (default: .)")
    parser.add_argument(
        "--wait",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="read again every 5 s until every check passes, for at most this long (default: 60; 0: read once)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print the checks that pass too")
    args = parser.parse_args(argv)
    if args.kubeconfig is not None and not args.kubeconfig.is_file():  # before the preview (new-user review 12, m4)
        print(f"error: --kubeconfig {args.kubeconfig}: no such file", file=sys.stderr)
        return 2
    plan = _plan(args)
    if plan is None:
        return 2
    from tpu_serving.config.errors import ConfigError

    try:
        expect = expectations(plan)
    except ConfigError as err:  # a --plan whose stack configuration the library refuses
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        from kubernetes import config as kube_config
        from kubernetes.config.config_exception import ConfigException
    except ImportError:
        print(
            "error: tpu-serving verify reads the cluster with the Kubernetes Python client, which is not installed: "
            "pip install '<path-of-this-repository>[verify]' or 'tpu-serving[verify] @ git+<url-of-this-repository>'"
            " (the README's Status)",
            file=sys.stderr,
        )
        return 2

    try:
        api_client = kube_config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(args.kubeconfig) if args.kubeconfig else None, context=args.context
        )
    except (ConfigException, OSError) as err:
        print(f"error: cannot read the kubeconfig: {err}", file=sys.stderr)
        return 2
    try:
        findings = verify_expected(api_client, expect, max(0.0, args.wait))
    except ClusterUnreadable as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    lines, ok = report(findings, args.verbose)
    print("\n".join(lines))
    return 0 if ok else 1
