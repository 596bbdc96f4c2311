"""What the two Pathways backends (``jetstream-pathways`` and ``pathways-job``) share: the Pathways release."""

from .versions import PINS

DEFAULT_PATHWAYS_VERSION = PINS["pathways"].value
"""Pathways release the stacks pin (``spec.pathwaysVersion``). The v0.1.4 controller uses it
as the tag of the server and proxy images (``makeImageTagUsingPathwaysVersion``:
``<image>:<pathwaysVersion>``, ``latest`` when unset); ``jax-0.5.3`` is the version the
Pathways on GKE guide (seed 003) names. The JAX client must match it: the batch container
gets ``PATHWAYS_JAX_VERSION`` and the interactive client example pins the same JAX."""
