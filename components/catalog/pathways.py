"""The Pathways releases of the two Pathways backends (``pathways-job`` and ``jetstream-pathways``).

They no longer share one: the PathwaysJob backend follows the newest release a Google source names, while
the JetStream backend keeps the release it was pinned with, under a JetStream image that no longer changes."""

from .versions import PINS

DEFAULT_PATHWAYS_VERSION = PINS["pathways"].value
"""Pathways release of the ``pathways-job`` backend (``spec.pathwaysVersion``). The v0.1.4 controller
uses it as the tag of the server and proxy images (``makeImageTagUsingPathwaysVersion``:
``<image>:<pathwaysVersion>``, ``latest`` when unset); ``jax-0.9.0`` is the release Google's
pathways-utils deploys by default (``deploy_pathways_service.py``, :data:`~tpu_serving.catalog.versions.PINS`).
The JAX client must match it: the batch container gets ``PATHWAYS_JAX_VERSION`` and the interactive
client example pins the same JAX."""

JETSTREAM_PATHWAYS_VERSION = PINS["pathways-jetstream"].value
"""Pathways release of the ``jetstream-pathways`` backend's server and proxy images: ``jax-0.5.3``, the
release the Pathways on GKE guide (seed 003) names. Its client is MaxText in the archived
``jetstream-pathways`` image, so it does not move with :data:`DEFAULT_PATHWAYS_VERSION`."""
