"""A model stack on a platform stack: the stack file's ``platform`` key, and what it refuses beside it.

A model stack (``platform: {stack: <org>/<project>/<stack>, cluster: <name>}``) reads the platform's ``platform`` output through a
``pulumi.StackReference`` (:mod:`tpu_serving.platform.platform_outputs`) and builds only its own part on the platform's cluster:
its TPU node pools, namespace, identity, serving, route and alerts. What the platform owns, the one-per-region
resources (the Cloud NAT, the proxy-only subnet), the cluster and the cluster-wide controllers, the model stack must
not ask for: :mod:`.platform_checks` refuses each such key at its key path, naming the owner.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from ..common.settings import Model, declared
from ..platform.existing import kubeconfig_path_problem
from ..platform.platform_cluster import PlatformClusterArgs

STACK_REFERENCE = r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""A fully qualified Pulumi stack name, ``<organization>/<project>/<stack>``, the ``stack_name`` a ``StackReference``
is given (pulumi 3.272.0 ``pulumi/stack_reference.py`` l.75-100); each part is held here to alphanumerics, ``-``,
``_`` and ``.``, the library's own bound."""


class PlatformRefConfig(Model):
    """The platform stack a model stack is built on."""

    stack: str = Field(
        description="The platform stack, fully qualified: `<organization>/<project>/<stack>` (e.g. "
        "`my-org/tpu-serving/platform-us-east5`), read through a Pulumi StackReference. The platform owns the "
        "cluster, its CPU pool, the Cloud NAT, the proxy-only subnet, the controllers and the shared Gateway; "
        "the model stack creates its TPU node pools, namespace, identity, serving and route. The offline preview "
        "answers the reference with the platform stack file's own preview (stacks/Pulumi.<stack>.yaml).",
        pattern=STACK_REFERENCE,
        min_length=5,
        max_length=200,
    )

    cluster: str = Field(
        description="The platform's GKE cluster (its `cluster.name`), which the stack's log-based metrics, alerts and "
        "dashboard filter on; the preview and `pulumi up` fail when the platform's output names another.",
        min_length=1,
        max_length=40,
        pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
    )

    moved_from: str | None = Field(
        None,
        description="The self-contained stack's deployment (its `cluster.name`) whose TPU node pools `pulumi state "
        "move` brought into this stack (docs/platform.md, Moving a self-contained stack): the pools keep their own "
        "node service accounts, as there, instead of running as the platform's (a node pool's service account is "
        "ForceNew: GKE would replace the pool). Set `cluster.name` to the same name, so the pools keep their GKE "
        "names and URNs. Unset: the pools run as the platform's node account.",
        min_length=1,
        max_length=40,
        pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
    )

    kubeconfig: str | None = declared(PlatformClusterArgs, "kubeconfig")
    context: str | None = declared(PlatformClusterArgs, "context")

    @field_validator("kubeconfig")
    @classmethod
    def _a_path(cls, v: str | None) -> str | None:
        problem = kubeconfig_path_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _context_of_a_file(self) -> PlatformRefConfig:
        if self.context is not None and self.kubeconfig is None:
            raise ValueError("context names a context of platform.kubeconfig: set kubeconfig too, or remove context")
        return self

    @property
    def stack_name(self) -> str:
        """The stack's own name, the last part (its stack file is ``Pulumi.<stack_name>.yaml``)."""
        return self.stack.rsplit("/", 1)[-1]

    @property
    def project(self) -> str:
        """The Pulumi project of the stack, the middle part."""
        return self.stack.split("/")[1]
