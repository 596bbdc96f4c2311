"""Which shipped stacks ``make e2e`` runs on its local control plane, and what the preview and the README say of it.

:data:`NOT_RUNNABLE` is the harness's own list of the stacks it leaves out (:func:`tpu_serving_tools.e2e.run.
default_stacks` runs every other stack file). The preview's ``Verified:`` line (:func:`verified_line`) and the
README's generated block (``python -m tpu_serving_tools.e2e.coverage [--check]``, run by ``make readme``) are read
off it, so a stack the harness cannot run is never shown as run (GKE review M1: the DisaggregatedSet stack and the
two PathwaysJob stacks never ran on the real control plane while nothing said so).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path

from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.docgen.settings_tables import rewrite
from tpu_serving_tools.preview.stack_files import load_project, stack_config

NOT_RUNNABLE: Mapping[str, str] = {
    "vllm-llama33-70b-disagg-v6e8x2": "its DisaggregatedSet needs LeaderWorkerSet v0.10.0's API (roles[].scaling, "
    "slices; the DisaggregatedSetRoleScaler its HPAs scale), and the Go module proxy serves LWS v0.9.0 at newest: "
    'the API server refuses it (.spec.roles[name="prefill"].scaling: field not declared in schema)',
    "pathwaysjob-batch-v6e16": "the PathwaysJob v0.1.4 controller is not served by the Go module proxy (module "
    "`pathways-job`): up, the second preview and destroy pass, and verify fails with 'its controller made no JobSet'",
    "pathwaysjob-interactive-v5e16": "as pathwaysjob-batch-v6e16: no PathwaysJob controller",
}
"""The stacks ``make e2e`` leaves out by name, and why (``E2E_STACKS=<stack>`` runs one anyway); a model stack whose
platform stack has no stack file is left out too (:data:`MODEL_WITHOUT_PLATFORM`, :func:`left_out`)."""

MODEL_WITHOUT_PLATFORM = (
    "a model stack whose platform stack ({platform}, platform.stack) has no stack file in stacks/: make e2e runs a "
    "model stack beside its platform stack, on the platform's control plane and state backend"
)
"""Why ``make e2e`` leaves out a model stack, a shipped one or one a user adds to ``stacks/``."""


def model_platforms(root: Path) -> dict[str, str]:
    """Each model stack of ``root``'s ``stacks/`` (a ``platform`` key), with its platform stack's own name (the last
    part of ``platform.stack``, :func:`~tpu_serving_tools.preview.platform_refs.referenced_platform`)."""
    from tpu_serving_tools.preview.platform_refs import referenced_platform

    project, found = load_project(root), {}
    for stack in shipped_stacks(root):
        reference = referenced_platform(stack_config(project, stack), project.name)
        if reference is not None:
            found[stack] = reference.rsplit("/", 1)[-1]
    return found


def left_out(root: Path) -> dict[str, str]:
    """The stack files of ``root``'s ``stacks/`` that ``make e2e`` leaves out, and why: :data:`NOT_RUNNABLE`'s, and
    each model stack whose platform stack has no stack file there."""
    shipped, platforms = shipped_stacks(root), model_platforms(root)
    found = {}
    for stack in shipped:
        platform = platforms.get(stack)
        why = NOT_RUNNABLE.get(stack) or (
            MODEL_WITHOUT_PLATFORM.format(platform=platform) if platform and platform not in shipped else None
        )
        if why is not None:
            found[stack] = why
    return found


HPA_RUN = (
    "the real HPA controller scaling the groups to maxReplicas on its metric written above target, then recommending "
    "a scale-down, the metric served by a stand-in for the Custom Metrics Stackdriver Adapter (the custom metrics "
    "API server library's test-adapter: not Managed Prometheus, nor the Stackdriver adapter's naming or its Workload "
    "Identity)"
)
"""What ``make e2e`` shows of a stack's HPA (:mod:`.autoscale`, :mod:`.metrics_adapter`)."""

RUN = (
    "not by this preview: make e2e, which CI runs on each commit, would take this stack file (as every one it does "
    "not leave out; one added since CI last ran has not been through it yet) through a local Kubernetes control plane (its controllers' binaries, kwok nodes, no TPU; LeaderWorkerSet v0.9.0 "
    "in place of the v0.10.0 the stack installs): up, verify, a second preview and destroy, and where the stack has "
    "them a scale through the scale subresource, a slice drain, a group moved off its slice, an engine-image rollout "
    f"and {HPA_RUN} (docs/development.md); its GCP resources (cluster, node pools and their placement policies, "
    "buckets, IAM, alerts) are previewed there, not created: no cloud API is reached"
)
MODEL_RUN = (
    "not by this preview: make e2e, which CI runs on each commit, would take this stack file beside its platform "
    "stack {platform} and the platform's other model stacks through one local Kubernetes control plane (the "
    "controllers' binaries, kwok nodes, no TPU, no Gateway controller; the platform on its existing-cluster mode, this "
    "stack reaching it through a kubeconfig, its node pools, buckets, accounts and alerts named existing): the "
    "platform up, then this stack up through its StackReference, verify, a second preview, its route attached to the "
    "platform's Gateway with its backends serving and no other route taking its requests, the platform's destroy "
    "refused while it serves, its destroy and up again while the others stay untouched, and destroy "
    "(docs/development.md); not its scale, drain, rollout nor HPA, which run for the self-contained stacks: its "
    "rollout, drain and scale-down lines above come from the library's own model"
)
UNVERIFIED = (
    "lifecycle unverified against the controller: make e2e does not run this stack ({why}); its rollout, drain and "
    "scale-down lines above come from the library's own model (make check), not from a run"
)


def shipped_stacks(root: Path) -> list[str]:
    """The stack files of ``root``'s ``stacks/``, by name."""
    return sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (root / "stacks").glob("Pulumi.*.yaml"))


def verified_line(
    stack: str, shipped: list[str], left: Mapping[str, str], platforms: Mapping[str, str] | None = None
) -> list[str]:
    """The preview's ``Verified:`` line of ``stack``: whether ``make e2e`` runs it (``left``: those it leaves out,
    :func:`left_out`; none for a stack that is not one of the ``shipped`` stack files: a user's own stack is not run
    by this project; ``platforms``: each model stack's platform stack, :func:`model_platforms`)."""
    if stack in left:
        return [f"Verified: {UNVERIFIED.format(why=left[stack])}"]
    if stack in shipped and stack in (platforms or {}):
        return [f"Verified: {MODEL_RUN.format(platform=(platforms or {})[stack])}"]
    return [f"Verified: {RUN}"] if stack in shipped else []


PAGE = Path("README.md")
"""The page that lists the stacks, from the repository's root."""

BLOCK = re.compile(r"(<!-- generated: e2e -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)


def block(left: Mapping[str, str]) -> str:
    """The README's lines on which stacks ``make e2e`` runs, from those it leaves out (:func:`left_out`)."""
    lines = [  # no count: a stack file added to stacks/ adds nothing here but its line below, if it is not run
        "`make e2e` runs every stack file in `stacks/` but those listed below on a local Kubernetes control plane (controller "
        "binaries, kwok nodes, no TPU; LeaderWorkerSet v0.9.0 for the v0.10.0 the stacks install; its Kubernetes "
        "objects are created, its GCP resources previewed only); for a stack with "
        f"an HPA it shows {HPA_RUN}. A model stack runs beside its platform stack and the platform's other model "
        "stacks, on one control plane and state backend: up, verify, a second preview, its route on the platform's "
        "Gateway, and a destroy that leaves the others whole. Not run, so their lifecycle is unverified against the "
        "controller (their previews say so on a `Verified:` line):",
        "",
        *(f"- `{s}`: {why}" for s, why in left.items()),
    ]
    return "\n".join(lines) + "\n"


def render(page: str, left: Mapping[str, str]) -> str:
    """``page`` with its generated e2e block rewritten."""
    return BLOCK.sub(lambda m: m.group(1) + block(left) + m.group(3), page)


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the block is stale, write nothing")
    args = parser.parse_args(argv)
    root = Path.cwd()
    new = render((root / PAGE).read_text(), left_out(root))
    return rewrite(root / PAGE, new, check=args.check, what="the e2e block")


if __name__ == "__main__":
    sys.exit(main())
