"""``tpu-serving``: the offline tools of the package, for this repository or any Pulumi program using it.

``tpu-serving preview <stack> [--root DIR]``   offline preview: build/<stack>/plan.json and manifests.yaml
``tpu-serving check [--stack S] [--root DIR]``  runtime model: scheduling, network, identity, prerequisites
``tpu-serving policy [--stack S] [--root DIR]`` the policy rules over the stacks' plans
``tpu-serving diff --base REF [--root DIR]``    Markdown preview diff against a git ref
``tpu-serving scan [--stack S] [--root DIR]``   Checkov over the stacks, against the reviewed baseline
``tpu-serving versions [--stale]``              the version set

``--root`` is the directory holding ``Pulumi.yaml`` (default: the working directory).
"""

from __future__ import annotations

import importlib
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "preview": ("tpu_serving_tools.preview", "offline preview of one stack"),
    "check": ("tpu_serving_tools.check", "runtime model over the stacks"),
    "policy": ("tpu_serving_policy.check", "policy rules over the stacks"),
    "diff": ("tpu_serving_tools.diff", "preview diff against a git ref"),
    "scan": ("tpu_serving_tools.scan.run", "Checkov over the stacks, against the reviewed baseline"),
    "versions": ("tpu_serving_tools.versions", "the version set: every pin, its date, the newest known"),
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in COMMANDS:
        print(f"usage: tpu-serving {{{','.join(COMMANDS)}}} [options]", file=sys.stderr)
        for name, (_, text) in COMMANDS.items():
            print(f"  {name:8} {text}", file=sys.stderr)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    module = importlib.import_module(COMMANDS[args[0]][0])
    return int(module.main(args[1:]))


if __name__ == "__main__":
    sys.exit(main())
