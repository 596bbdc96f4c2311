"""The typed arguments of :class:`~tpu_serving.backends.saxml.component.SaxmlServing`: images, models, exposure."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...catalog import SliceShape
from ...catalog.images import image_problem
from ...catalog.versions import PINS
from ...common.naming import namespace_problem
from ...common.settings import described
from ...common.validation import Choice


class Exposure(Choice):
    """How sax-http is exposed."""

    INTERNAL = "internal"
    PUBLIC = "public"
    CLUSTER = "cluster"


@dataclass(frozen=True)
class SaxmlImages:
    """Container images of the Saxml servers and the publisher."""

    admin: str = described(
        "Sax admin server image.",
        default=PINS["sax-admin-server"].value,
        check=image_problem,
    )
    model_server: str = described(
        "Sax model server image.",
        default=PINS["sax-model-server"].value,
        check=image_problem,
    )
    http: str = described("sax-http image.", default=PINS["sax-http"].value, check=image_problem)
    publisher: str = described(
        "Image of the publication Job (any Python 3).", default="python:3.12-slim", check=image_problem
    )


@dataclass(frozen=True)
class SaxModel:
    """A model the cell serves, as ``/publish`` takes it."""

    model: str
    """Model path in the cell, e.g. ``/sax/test/spmd``."""
    model_path: str
    """Saxml model class, e.g. ``saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test``."""
    checkpoint: str = "None"
    """Checkpoint path, or ``None`` for random weights."""
    replicas: int = 1
    """Model server replicas (one slice each)."""


@dataclass(frozen=True)
class SaxmlServingArgs:
    """Arguments of :class:`SaxmlServing`."""

    namespace: str = field(metadata={"check": namespace_problem})
    """Namespace of the workload."""
    service_account: str
    """Kubernetes service account of every Sax pod (workload identity, bucket-scoped roles)."""
    shape: SliceShape
    """Shape of each model-server slice."""
    num_slices: int
    """Model servers: one replicated job (one slice) each."""
    state_bucket: str
    """Bucket holding the admin state (``GSBUCKET``) and ``SAX_ROOT``."""
    cell: str = "/sax/test"
    """The Sax cell (``--sax_cell``)."""
    models: Sequence[SaxModel] = ()
    """Models to publish."""
    images: SaxmlImages = field(default_factory=SaxmlImages)
    """Container images."""
    max_restarts: int = 4
    """JobSet ``failurePolicy.maxRestarts``."""
    privileged: bool = False
    """Run the model servers privileged (TPU access on GKE before 1.28)."""
    exposure: Exposure = Exposure.INTERNAL
    """sax-http Service: ``internal`` LoadBalancer, ``public`` LoadBalancer, or ``cluster`` (ClusterIP)."""
    source_ranges: Sequence[str] = ()
    """``loadBalancerSourceRanges`` (required for ``public``)."""
    publish_timeout_seconds: int = 1800
    """How long the publication Job waits for sax-http and the replicas."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the objects and pods."""
    priority_class_name: str | None = None
    """PriorityClass of the Sax pods."""

    @property
    def sax_root(self) -> str:
        """``SAX_ROOT``: the cell's root in the state bucket."""
        return f"gs://{self.state_bucket}/sax-root"
