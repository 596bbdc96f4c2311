"""``tpu-serving``: the offline tools of the package, for this repository or any Pulumi program using it.

``tpu-serving preview <stack> [--root DIR]``   offline preview: build/<stack>/plan.json and manifests.yaml
``tpu-serving check [--stack S] [--root DIR]``  runtime model: scheduling, network, identity, prerequisites
``tpu-serving policy [--stack S] [--root DIR]`` the policy rules over the stacks' plans
``tpu-serving diff --base REF [--root DIR]``    Markdown preview diff against a git ref
``tpu-serving scan [--stack S] [--root DIR]``   Checkov over the stacks, against the reviewed baseline
``tpu-serving versions [--stale]``              the version set
``tpu-serving runbook --stack S [--root DIR]``  the runbooks' commands in one stack's own names
``tpu-serving plan --model M --output-tokens-per-second N``  slices and groups from published throughputs
``tpu-serving --version``                       the installed package's version

``--root`` is the directory holding ``Pulumi.yaml`` (default: the working directory). Every tool builds its
parser with :func:`command_parser`, so its ``--help`` is plain text under its ``tpu-serving`` name.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "tpu-serving"

COMMANDS: dict[str, tuple[str, str]] = {
    "preview": ("tpu_serving_tools.preview.stack", "offline preview of one stack"),
    "check": ("tpu_serving_tools.check", "runtime model over the stacks"),
    "policy": ("tpu_serving_tools.policy_check", "policy rules over the stacks"),
    "diff": ("tpu_serving_tools.diff.review", "preview diff against a git ref"),
    "scan": ("tpu_serving_tools.scan.run", "Checkov over the stacks, against the reviewed baseline"),
    "verify": ("tpu_serving_tools.verify", "a deployed stack on its cluster, read-only"),
    "versions": ("tpu_serving_tools.preview.versions", "the version set: every pin, its date, the newest known"),
    "runbook": ("tpu_serving_tools.runbook.command", "the runbooks' commands in one stack's own names"),
    "plan": ("tpu_serving_tools.plan", "slices and groups for a model and an output rate, from published throughputs"),
}


def plain(text: str) -> str:
    """``text`` without reStructuredText markup: ``` ``x`` ```, `` `x` `` and ``:role:`x``` become ``x``."""
    return re.sub(r"(?::[a-z]+:)?`+([^`]*)`+", r"\1", text)


def command_parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """The argument parser of the tool in ``module``: named ``tpu-serving <command>`` when it is one of
    :data:`COMMANDS`, described by the first paragraph of its docstring ``doc`` in plain text."""
    command = next((name for name, (path, _) in COMMANDS.items() if path == module), None)
    paragraph = " ".join(line.strip() for line in (doc or "").strip().split("\n\n")[0].splitlines())
    return argparse.ArgumentParser(prog=f"tpu-serving {command}" if command else None, description=plain(paragraph))


def package_version() -> str:
    """The installed distribution's version (pyproject.toml's, the one place it is written)."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown (the package is not installed)"


def usage() -> str:
    lines = [f"usage: tpu-serving {{{','.join(COMMANDS)}}} [options]", "       tpu-serving --help | --version", ""]
    lines += [f"  {name:8} {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "tpu-serving <command> --help describes a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["-h"], ["--help"]):
        print(usage())
        return 0
    if args[:1] == ["--version"]:
        print(f"tpu-serving {package_version()}")
        return 0
    if not args or args[0] not in COMMANDS:
        problem = f"error: unknown command {args[0]!r}\n" if args else ""
        print(f"{problem}{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[args[0]][0])
    return int(module.main(args[1:]))


if __name__ == "__main__":
    sys.exit(main())
