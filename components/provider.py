"""The package's components for other languages: a Pulumi component provider.

``pulumi package add <repo>/provider`` (``provider/PulumiPlugin.yaml``) runs this provider,
which serves every public component of :mod:`tpu_serving` to TypeScript, Go, YAML or any
other Pulumi language; its schema comes from the components' own annotations through the
Python SDK's analyzer (``pulumi.provider.experimental``). :func:`schema` builds it offline.

One adaptation of the SDK's provider: the analyzer makes every input required unless it is
``Optional``; here an argument with a default in its dataclass is optional too, as it is in
Python. The components rebuild their dataclass arguments from what the provider passes
(:func:`tpu_serving.common.validation.check_arguments`).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
from typing import Any

import pulumi
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema

from .backends.jetstream import PathwaysServing
from .backends.pathways_job import PathwaysWorkload
from .backends.saxml import SaxmlServing
from .backends.vllm import VllmServing
from .deployment import TpuServingDeployment
from .operations.autoscaling import ServingAutoscaler
from .operations.maintenance.host_maintenance_job import HostMaintenanceGate
from .operations.observability import Observability
from .platform.buckets import Buckets, SharedBuckets
from .platform.cluster import TpuCluster
from .platform.controllers import ControllerInstall
from .platform.cpu_nodepool import CpuNodePool
from .platform.existing import ExistingCluster, ExistingCpuNodePool, ExistingTpuNodePool
from .platform.image_mirror import ImageMirror
from .platform.services import ProjectServices
from .pools.compute_class import TpuComputeClass
from .pools.nodepool import TpuNodePool
from .tenancy.identity import WorkloadIdentity
from .tenancy.tenant import Tenancy
from .traffic.gateway import ServingGateway

NAME = "tpu-serving"
"""The package name: resource types are ``tpu-serving:index:<Component>``."""

COMPONENTS: tuple[type[pulumi.ComponentResource], ...] = (
    TpuServingDeployment,
    TpuCluster,
    TpuNodePool,
    TpuComputeClass,
    CpuNodePool,
    ExistingCluster,
    ExistingTpuNodePool,
    ExistingCpuNodePool,
    WorkloadIdentity,
    Buckets,
    SharedBuckets,
    ProjectServices,
    Tenancy,
    ControllerInstall,
    PathwaysServing,
    SaxmlServing,
    PathwaysWorkload,
    VllmServing,
    Observability,
    ServingAutoscaler,
    ServingGateway,
    HostMaintenanceGate,
    ImageMirror,
)
"""Every public component the provider serves."""


def _defaulted(cls: Any) -> set[str]:
    if not dataclasses.is_dataclass(cls):
        return set()
    return {
        f.name
        for f in dataclasses.fields(cls)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    }


class DataclassComponentProvider(ComponentProvider):
    """The SDK's component provider, with dataclass defaults making an input optional."""

    def __init__(self, components: list[type[pulumi.ComponentResource]], name: str, version: str):
        super().__init__(components, name, None, version)
        for component in components:
            definition = self._component_defs[component.__name__]
            args = inspect.get_annotations(component.__init__)["args"]
            _relax(definition.inputs, definition.inputs_mapping, args)
        for type_def in self._type_defs.values():
            _relax(type_def.properties, type_def.properties_mapping, type_def.python_type)
        package = generate_schema(name, version, None, self._component_defs, self._type_defs, self._dependencies)
        self.schema: str = json.dumps(package.to_json())


def _relax(properties: dict[str, Any], mapping: dict[str, str], cls: Any) -> None:
    defaulted = _defaulted(cls)
    for schema_name, prop in properties.items():
        if mapping[schema_name] in defaulted:
            prop.optional = True


def version() -> str:
    """The installed distribution's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(NAME)
    except PackageNotFoundError:
        return "0.0.0"


def schema() -> dict[str, Any]:
    """The package schema, built offline: what ``pulumi package add`` gets from the provider."""
    return dict(json.loads(DataclassComponentProvider(list(COMPONENTS), NAME, version()).schema))


def main() -> None:
    """Serve the components (the engine starts this with its address as the argument)."""
    from pulumi.provider import main as serve

    serve(DataclassComponentProvider(list(COMPONENTS), NAME, version()), sys.argv[1:])
