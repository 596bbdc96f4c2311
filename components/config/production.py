"""Whether a stack is fit to serve production traffic (``production``): the gaps that keep its serving from an SLO,
which ``production: true`` refuses, each at its key, and which the preview's ``Production:`` line lists when the stack
says ``production: false`` (SRE review round 40, M1 and M6: the example stacks page nobody, and four serve from one
group, so a team that copies one copies its opt-outs unless the stack says what it is).

The gaps every backend shares are here: alert policies that notify nobody, or none; one serving group. A backend's
own are its :attr:`~tpu_serving.backends.Backend.production_gaps` (an alpha API in the serving path, a job that
disruptions fail for good)."""

from __future__ import annotations

from ..backends import BACKENDS
from ..backends.base import Gap
from ..settings import PROJECT_NAMESPACE, CreateOrExisting
from .checks import full_outage
from .models import StackConfig

NO_ALERTS = Gap(
    "observability.enabled",
    "false",
    "the stack creates no alert policy: an outage is seen only by someone looking at the serving",
)
UNPAGED = Gap(
    "observability.unpaged",
    "true",
    "its alert policies notify nobody: an outage is seen only by someone looking at Cloud Monitoring; name the "
    "pages' channels in observability.notificationChannels",
)


def single_group_gap(why: str) -> Gap:
    """``serving.singleGroup: accepted``: each disruption of the one group stops the service (:func:`full_outage`)."""
    return Gap(
        "serving.singleGroup",
        "accepted",
        f"{why}: a node failure, a repair, TPU host maintenance, a node upgrade or a rollout stops the whole service "
        "until the slice is back and the model has reloaded",
    )


def production_gaps(cfg: StackConfig) -> list[Gap]:
    """What keeps the stack's serving from a production SLO, in the stack file's order; none without serving."""
    serving = cfg.serving
    if serving is None:
        return []
    watch = cfg.observability
    gaps = []
    if not watch.enabled:
        gaps.append(NO_ALERTS)
    elif watch.cloud_resources == CreateOrExisting.CREATE and not watch.notification_channels and watch.unpaged:
        gaps.append(UNPAGED)
    why, _ = full_outage(serving)
    if why and getattr(serving, "single_group", None) == "accepted":
        gaps.append(single_group_gap(why))
    return [*gaps, *BACKENDS[serving.backend].production_gaps(serving)]


def production_problems(cfg: StackConfig) -> list[str]:
    """Each gap of a stack that says ``production: true`` (the default), at its key."""
    if not cfg.production:
        return []
    return [
        f"{PROJECT_NAMESPACE}:{g.key} = {g.value}: {g.why}; production: true refuses it (set production to false to "
        "run the stack as an example; valid: true, false)"
        for g in production_gaps(cfg)
    ]


def production_output(cfg: StackConfig) -> dict[str, object]:
    """The ``production`` stack output, which the preview prints: whether the stack says it serves production
    traffic, and the gaps (none when it does: they are refused)."""
    return {
        "production": cfg.production,
        "gaps": [f"{g.key} {g.value}: {g.why}" for g in production_gaps(cfg)],
    }
