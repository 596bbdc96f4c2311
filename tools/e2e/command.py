"""``make e2e``'s command: each stack's run (:mod:`.run`; a platform stack with its model stacks,
:mod:`.model_run`), in this process or each in a process of its own (:mod:`.parallel`), its findings printed, and a
summary line. It sits above the runs it starts, so none of them imports it back."""

from __future__ import annotations

import argparse
import functools
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from . import run
from .coverage import left_out
from .model_run import model_stacks_of, run_platform_group
from .parallel import run_stacks
from .platform_run import is_platform, platform_lifecycle
from .run import Setup, default_stacks, run_stack, run_units, stack_config


def _run_and_print(setup: Setup, stack: str, verbose: bool) -> bool:
    """One stack's run in this process, its findings printed; whether it passed."""
    platform = is_platform(stack_config(setup.root, stack))
    models = model_stacks_of(setup.root, stack) if platform else []
    if models:
        report = run_platform_group(setup, stack, models)
    else:
        report = run_stack(setup, stack, lifecycle=platform_lifecycle if platform else None)
    lines = [f.line() for f in report.findings if verbose or not f.ok]
    print(f"== {stack}: {'passed' if report.ok else 'FAILED'} {report.timings}", flush=True)
    print("\n".join([*lines, *([f"error: {report.error}"] if report.error else [])]), flush=True)
    return report.ok


def _child_argv(args: argparse.Namespace, stack: str) -> list[str]:
    """The command line of one stack's run in a process of its own (:mod:`.parallel`)."""
    verbose = ["--verbose"] if args.verbose else []
    root, work = str(args.root.resolve()), str(args.work.resolve())
    return [sys.executable, "-m", "tpu_serving_tools.e2e.command", "--root", root, "--work", work, *verbose, stack]


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tpu_serving_tools.e2e.command STACK...``: each stack's run, its findings, and a summary line."""
    parser = argparse.ArgumentParser(prog="make e2e", description=(run.__doc__ or "").split("\n\n")[0] or None)
    parser.add_argument(
        "stacks",
        nargs="*",
        help="the stacks to run (stacks/Pulumi.<stack>.yaml; default: all but those coverage.left_out names)",
    )
    parser.add_argument("--root", type=Path, default=Path("."), help="the project folder (default: .)")
    parser.add_argument("--work", type=Path, default=Path("build") / "e2e" / "runs", help="where each run's state goes")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the findings that pass too")
    parser.add_argument(
        "-j", "--jobs", type=int, default=1, help="stacks run at once, each in a process of its own (default: 1)"
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")
    # SIGTERM (CI's timeout, a `kill`) unwinds like Ctrl-C, so each control plane's context manager stops its
    # processes instead of leaving them behind.
    signal.signal(signal.SIGTERM, _terminated)
    try:
        setup = Setup.load(args.root.resolve(), args.work.resolve())
    except FileNotFoundError as missing:
        print(f"e2e: no toolchain ({missing.filename}): run make e2e-tools first (make e2e runs it)", file=sys.stderr)
        return 2
    stacks = run_units(setup.root, args.stacks) if args.stacks else default_stacks(setup.root)
    if not stacks:
        print("e2e: no stack to run", file=sys.stderr)
        return 1
    skipped = {} if args.stacks else left_out(setup.root)
    if args.jobs > 1 and len(stacks) > 1:
        failed = run_stacks(stacks, args.jobs, functools.partial(_child_argv, args), setup.work)
    else:
        failed = [stack for stack in stacks if not _run_and_print(setup, stack, args.verbose)]
    passed = len(stacks) - len(failed)
    print("\n".join(f"not run: {s}: {why}" for s, why in skipped.items()))
    print(
        f"e2e: {passed} passed, {len(failed)} failed"
        + (f" ({', '.join(failed)})" if failed else "")
        + (f", {len(skipped)} not run" if skipped else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
