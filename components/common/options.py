"""Resource options shared by the components."""

from __future__ import annotations

import pulumi


def child_options(parent: pulumi.Resource, opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions:
    """Options of a component's children: ``parent`` and the component's own ``depends_on``.

    The SDK does not pass a component's ``depends_on`` on to the resources it creates, so a
    component that must wait for something (the project's APIs, say) passes it on here.
    """
    return pulumi.ResourceOptions(parent=parent, depends_on=(opts.depends_on if opts else None))
