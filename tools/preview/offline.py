"""Run a Pulumi Python program in-process, as ``pulumi preview`` would, and record what it declares.

There is no engine and no provider here: a recording resource monitor (a subclass of
Pulumi's ``MockMonitor``) receives every ``RegisterResource`` call exactly as the engine
would, including parent, provider and dependencies, which ``MockResourceArgs`` does not
carry. Providers compute nothing: a resource's outputs are its inputs, so everything a
provider would compute (a cluster endpoint, a service account's email, an ID) stays
unknown, as it does in a real preview.

Stack configuration is loaded the way the Pulumi CLI loads it (``stack_files``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import importlib.util
import logging
import runpy
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from tpu_serving_tools.preview.stack_files import Project, StackConfigError, load_project, stack_config

UNKNOWN = "<unknown>"
"""How a value that only the provider can compute is shown in plans and manifests."""

# Property values the SDK marks specially on the wire.
_SIG = rpc._special_sig_key
_SECRET_SIG = rpc._special_secret_sig
_RESOURCE_SIG = rpc._special_resource_sig

# Resource types that a provider expands on the server side; under a monitor they are one
# opaque resource each (their objects exist only once the provider has read the sources).
OPAQUE_KUBERNETES_TYPES = frozenset(
    {
        "kubernetes:yaml/v2:ConfigGroup",
        "kubernetes:yaml/v2:ConfigFile",
        "kubernetes:helm.sh/v4:Chart",
        "kubernetes:kustomize/v2:Directory",
    }
)


# --------------------------------------------------------------------------- recording


@dataclass
class RecordedResource:
    """One ``RegisterResource`` call as the engine receives it."""

    urn: str
    type: str
    name: str
    custom: bool
    parent: str | None
    provider: str | None
    dependencies: list[str]
    inputs: dict[str, Any]
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    """Input name -> URNs of the resources whose outputs flow into that input."""
    protect: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    replace_on_changes: list[str] = field(default_factory=list)
    delete_before_replace: bool = False
    custom_timeouts: dict[str, str] = field(default_factory=dict)
    retain_on_delete: bool = False
    aliases: list[dict[str, Any]] = field(default_factory=list)
    """The alias specs as the engine receives them (``parent`` or ``noParent``, ``name``, ``type``...)."""
    registered_outputs: dict[str, Any] | None = None
    """A component's ``register_outputs``, as the engine receives them (``None``: never registered)."""

    def as_json(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"aliases": self.aliases} if self.aliases else {}
        if self.registered_outputs is not None:
            extra["registeredOutputs"] = self.registered_outputs
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "custom": self.custom,
            "parent": self.parent,
            "provider": self.provider,
            "dependencies": self.dependencies,
            "propertyDependencies": self.property_dependencies,
            "inputs": self.inputs,
            "protect": self.protect,
            "ignoreChanges": self.ignore_changes,
            "replaceOnChanges": self.replace_on_changes,
            "deleteBeforeReplace": self.delete_before_replace,
            "customTimeouts": self.custom_timeouts,
            "retainOnDelete": self.retain_on_delete,
            **extra,
        }


def plain(value: Any) -> Any:
    """Wire value -> plain JSON: integers as integers, unknowns and references readable."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return UNKNOWN if value == rpc.UNKNOWN else value
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        sig = value.get(_SIG)
        if sig == _SECRET_SIG:
            return {"secret": plain(value.get("value"))}
        if sig == _RESOURCE_SIG:
            return value.get("urn")
        return {k: plain(value[k]) for k in sorted(value)}
    return value


class RecordingMonitor(mocks.MockMonitor):
    """A ``MockMonitor`` that keeps each registration's parent, provider and dependencies."""

    def __init__(self, mocks_: mocks.Mocks):
        super().__init__(mocks_)
        self.recorded: list[RecordedResource] = []
        self.duplicates: list[str] = []
        """URNs registered a second time, which the engine refuses."""
        self.invokes: list[str] = []
        """Tokens of the provider functions (data sources) the program called, and the types of the resources it
        read (``.get``), in order: what a deploy would ask the providers before creating anything."""

    def Invoke(self, request: Any) -> Any:  # a resource_pb2.ResourceInvokeRequest
        if request.tok != "pulumi:pulumi:getResource":
            self.invokes.append(str(request.tok))
        return super().Invoke(request)  # type: ignore[no-untyped-call]

    def ReadResource(self, request: Any) -> Any:  # a resource_pb2.ReadResourceRequest
        self.invokes.append(str(request.type))
        return super().ReadResource(request)  # type: ignore[no-untyped-call]

    def RegisterResource(self, request: Any) -> Any:  # a resource_pb2.RegisterResourceRequest
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        # the engine refuses a second registration of one URN (pulumi/pulumi pkg/diag/errors.go, code 2001,
        # GetDuplicateResourceURNError); the mocks do not (library review 4, M7)
        if any(r.urn == response.urn for r in self.recorded):  # said once the program ends: none of its work is left
            self.duplicates.append(str(response.urn))
        if request.type != "pulumi:pulumi:Stack":
            deps = set(request.dependencies)
            prop_deps = {k: sorted(set(v.urns)) for k, v in sorted(request.propertyDependencies.items()) if v.urns}
            for urns in prop_deps.values():
                deps.update(urns)
            timeouts = request.customTimeouts
            self.recorded.append(
                RecordedResource(
                    urn=response.urn,
                    type=request.type,
                    name=request.name,
                    custom=bool(request.custom),
                    parent=request.parent or None,
                    # A provider reference is "<urn>::<id>"; the id is unknown in a preview.
                    provider=request.provider.rsplit("::", 1)[0] or None,
                    dependencies=sorted(deps),
                    inputs=plain(json_format.MessageToDict(request.object)),
                    property_dependencies=prop_deps,
                    protect=bool(request.protect),
                    ignore_changes=list(request.ignoreChanges),
                    replace_on_changes=list(request.replaceOnChanges),
                    delete_before_replace=bool(request.deleteBeforeReplace),
                    custom_timeouts={
                        k: getattr(timeouts, k) for k in ("create", "update", "delete") if getattr(timeouts, k)
                    },
                    retain_on_delete=bool(request.retainOnDelete),
                    aliases=[plain(json_format.MessageToDict(a)) for a in request.aliases],
                )
            )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:  # a resource_pb2.RegisterResourceOutputsRequest
        """A component's outputs (the stack's own are read from the root resource instead)."""
        for r in self.recorded:
            if r.urn == request.urn:
                r.registered_outputs = plain(json_format.MessageToDict(request.outputs))
        return super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]


STACK_REFERENCE = "pulumi:pulumi:StackReference"


class PreviewMocks(mocks.Mocks):
    """Providers that compute nothing: outputs are the inputs, IDs unknown; a StackReference is answered with the
    outputs of the referenced stack's own offline preview (``references``, :mod:`tpu_serving_tools.preview.platform_refs`)."""

    def __init__(self, references: Mapping[str, Mapping[str, Any]] | None = None):
        self.references = dict(references or {})

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == STACK_REFERENCE:  # read with its stack's name as id (pulumi/stack_reference.py l.88-100)
            name = str(args.inputs.get("name"))
            return name, {"name": name, "outputs": dict(self.references.get(name, {})), "secretOutputNames": []}
        return "", dict(args.inputs)

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        # Data sources answer only against the cloud; what the program reads of them is unknown here.
        # The second item: no check failures.
        if args.token == "gcp:organizations/getProject:getProject":
            return {"number": UNKNOWN, "projectId": args.args.get("projectId")}, []
        if args.token == "gcp:container/getCluster:getCluster":
            found = {"name": args.args.get("name"), "location": args.args.get("location"), "endpoint": UNKNOWN}
            found |= {"datapathProvider": UNKNOWN, "networkPolicies": []}
            return {**found, "masterAuths": [{"clusterCaCertificate": UNKNOWN}]}, []
        return {}, []


# --------------------------------------------------------------------------- running


@dataclass
class Plan:
    """What a program declared for one stack."""

    stack: str
    project: str
    resources: list[RecordedResource]
    outputs: dict[str, Any]
    config: dict[str, str] = field(default_factory=dict)
    """The stack's configuration as the program read it (``<namespace>:<key>`` -> its JSON or string value):
    what the stack asks for, which the runtime model compares the objects with."""
    warnings: list[str] = field(default_factory=list)
    """What the program logged at WARNING and above (``pulumi.log.warn``; not in ``plan.json``): the preview's summary
    says each once, after its own lines unless one of them says it already (a component's ``Caution:``)."""
    invokes: list[str] = field(default_factory=list)
    """Tokens of the provider functions the program called and types of the resources it read, in order (not in
    ``plan.json``): a plan with no ``gcp:`` among them, nor among its resources, deploys with the Kubernetes
    provider alone."""

    def as_json(self) -> dict[str, Any]:
        return {
            "stack": self.stack,
            "project": self.project,
            "config": self.config,
            "resources": [r.as_json() for r in self.resources],
            "outputs": self.outputs,
        }

    def of_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_]


def _resolve(value: Any) -> Any:
    out = pulumi.Output.from_input(value)
    known = _sync_await(out.is_known())
    return plain(_sync_await(out.future())) if known else UNKNOWN


def _open_event_loop() -> None:
    """A usable event loop for the mocks: a ``pulumi up`` through the Automation API in this process (``make e2e``
    runs one per stack) leaves the thread's loop closed, and ``set_mocks`` schedules on the current loop."""
    try:
        loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        loop = None
    if loop is None or loop.is_closed():
        asyncio.set_event_loop(asyncio.new_event_loop())


@contextlib.contextmanager
def _no_source_positions() -> Iterator[None]:
    """Register without the SDK's source positions for the length of one offline run.

    For each resource the SDK walks the Python stack (``traceback.extract_stack``) to send the engine a stack trace
    and the source position of the user's code (pulumi 3.272.0 ``runtime/resource.py`` l.741-778 ``_get_stack_trace``,
    called at l.833, l.837 and l.1160). The engine shows them in diagnostics; the recording monitor
    keeps neither, and the walk was about a sixth of a stack's offline run. The SDK's function is put back after the
    run: a ``pulumi up`` through the Automation API in the same process (``make e2e``) sends them as usual.
    """
    saved = sdk_resource._get_stack_trace
    sdk_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        sdk_resource._get_stack_trace = saved


_P = ParamSpec("_P")
_T = TypeVar("_T")


class _InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """An executor that runs each call at once, in the calling thread, and hands back its finished future."""

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> concurrent.futures.Future[_T]:
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as err:  # as a pool thread hands it over: raised where the call is awaited
            future.set_exception(err)
        return future


@contextlib.contextmanager
def _monitor_calls_inline() -> Iterator[None]:
    """The recording monitor's calls run on the event loop's own thread for the length of one offline run.

    The SDK makes each call to the engine (RegisterResource, RegisterResourceOutputs, Invoke, SupportsFeature: pulumi
    3.272.0 ``runtime/resource.py`` l.1344 and l.1458, ``runtime/invoke.py`` l.346, ``runtime/settings.py`` l.476)
    through the loop's default executor, a pool of threads, since a real engine is a gRPC server that may take its
    time. The recording monitor answers at once from memory, so each call was two thread switches for nothing: about
    8% of a stack's offline run. Every stack's plan, warnings and provider calls are the same either way (compared
    over every stack file). The loop's own executor is put back after the run: a ``pulumi up`` through the Automation
    API in the same process (``make e2e``) calls its engine from the pool as usual."""
    loop = asyncio.get_event_loop_policy().get_event_loop()
    state = vars(loop)  # BaseEventLoop keeps its executor there; set_default_executor cannot put back "none yet"
    saved = state.get("_default_executor")
    loop.set_default_executor(_InlineExecutor(max_workers=1))
    try:
        yield
    finally:
        state["_default_executor"] = saved


class _ProgramLog(logging.Handler):
    """The program's log (the mock engine's ``Log``), kept for the summary instead of printed as it comes."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self.logger = logging.Logger("tpu_serving.offline.program", logging.WARNING)
        self.logger.propagate = False
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def run_program(
    program: Callable[[], None],
    config: Mapping[str, str],
    *,
    project: str,
    stack: str,
    references: Mapping[str, Mapping[str, Any]] | None = None,
) -> Plan:
    """Run ``program`` against a recording monitor with ``config``; return what it declared.

    Each run happens in a fresh ``contextvars`` context, so runs in one process do not
    share Pulumi's global settings, config or root stack.
    """

    def run() -> Plan:
        _open_event_loop()
        settings.ROOT.set(None)
        pulumi.runtime.set_all_config(dict(config))
        monitor = RecordingMonitor(PreviewMocks(references))
        logged = _ProgramLog()
        with _no_source_positions(), _monitor_calls_inline():
            mocks.set_mocks(
                monitor.mocks, project=project, stack=stack, preview=True, logger=logged.logger, monitor=monitor
            )
            _sync_await(run_pulumi_func(program))
        if monitor.duplicates:
            urn = monitor.duplicates[0]
            raise pulumi.RunError(f"Duplicate resource URN '{urn}'; try giving it a unique name")
        root = settings.get_root_resource()
        outputs = {k: _resolve(v) for k, v in getattr(root, "outputs", {}).items()}
        resources = sorted(monitor.recorded, key=lambda r: r.urn)
        return Plan(
            stack=stack,
            project=project,
            resources=resources,
            outputs=outputs,
            config=dict(sorted(config.items())),
            invokes=list(monitor.invokes),
            warnings=logged.messages,
        )

    return contextvars.Context().run(run)


def close_event_loop() -> None:
    """Close the event loop the SDK made for this thread (call once, before the process exits)."""
    import asyncio

    loop = asyncio.get_event_loop_policy().get_event_loop()
    if not loop.is_closed():
        loop.close()


LIBRARY = "tpu_serving"
"""The library's import name; its sources are the ``components/`` folder of a tpu-serving checkout."""


def use_local_library(root: Path) -> None:
    """Make ``import tpu_serving`` load ``root``'s own ``components/`` when ``root`` is a tpu-serving checkout.

    ``make diff`` previews an older checkout of this repository with the installed tools; its
    program must run against its own library, not the installed one. A user's project (no
    ``components/`` of ours) keeps the installed library.
    """
    source = root / "components" / "__init__.py"
    pyproject = root / "pyproject.toml"
    if not (source.is_file() and pyproject.is_file() and f'{LIBRARY} = "components"' in pyproject.read_text()):
        return
    loaded = sys.modules.get(LIBRARY)
    if loaded is not None and Path(loaded.__file__ or "").resolve() == source.resolve():
        return
    for name in [m for m in sys.modules if m == LIBRARY or m.startswith(LIBRARY + ".")]:
        del sys.modules[name]
    spec = importlib.util.spec_from_file_location(LIBRARY, source, submodule_search_locations=[str(source.parent)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[LIBRARY] = module
    spec.loader.exec_module(module)


def main_program(project: Project) -> Callable[[], None]:
    """The project's ``__main__.py`` as a callable, run as the Python language host runs it."""

    def program() -> None:
        root = str(project.root)
        if root not in sys.path:
            sys.path.insert(0, root)
        use_local_library(project.root)
        runpy.run_path(str(project.main), run_name="__main__")

    return program


def preview_stack(root: Path, stack: str) -> Plan:
    """Load ``stack``'s config as the CLI would and run the project's program for it; a model stack's platform
    (``platform.stack``) is previewed first, and its outputs answer the model stack's StackReference."""
    from tpu_serving_tools.preview.platform_refs import platform_references

    project = load_project(root)
    config = stack_config(project, stack)
    references = platform_references(project, config, stack, lambda name: preview_stack(root, name).outputs)
    return run_program(main_program(project), config, project=project.name, stack=stack, references=references)


def program_frame(err: BaseException, root: Path) -> str:
    """``<file>:<line>: `` of the innermost frame of the traceback inside the project at ``root`` (the user's
    own line), or ``""``."""
    import traceback

    frames = [f for f in traceback.extract_tb(err.__traceback__) if Path(f.filename).resolve().is_relative_to(root)]
    return f"{Path(frames[-1].filename).resolve().relative_to(root)}:{frames[-1].lineno}: " if frames else ""


def preview_stacks(root: Path, stacks: list[str]) -> list[tuple[str, dict[str, Any]]] | None:
    """The plans of ``stacks`` (every stack of the project when empty) of the project at ``root``.

    Prints each stack's problems without a traceback and returns None when one cannot be
    previewed (an invalid stack, an unknown stack name). After a full run the event loop is
    closed, as a command ending its process does.
    """
    plans = []
    try:
        names = stacks or load_project(root).stacks()
    except StackConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return None
    for i, stack in enumerate(names, 1):
        print(f"previewing {stack} ({i}/{len(names)})", file=sys.stderr, flush=True)
        try:
            plans.append((stack, preview_stack(root, stack).as_json()))
        except (pulumi.RunError, StackConfigError) as err:
            print(f"error: {stack}: {err}", file=sys.stderr)
            return None
        except Exception as err:  # the program's own mistake, one line as the preview says it (library review 4, m3)
            print(f"error: {stack}: {program_frame(err, root.resolve())}{type(err).__name__}: {err}", file=sys.stderr)
            return None
    close_event_loop()
    return plans


def kubernetes_objects(plan: Plan) -> list[dict[str, Any]]:
    """Every Kubernetes object the plan declares, as it would be sent to the API server."""
    objects: list[dict[str, Any]] = []
    for r in plan.resources:
        if not r.custom or not r.type.startswith("kubernetes:") or r.type in OPAQUE_KUBERNETES_TYPES:
            continue
        if r.type.startswith("pulumi:providers:"):
            continue
        doc = dict(r.inputs)
        ordered: dict[str, Any] = {k: doc.pop(k) for k in ("apiVersion", "kind", "metadata") if k in doc}
        objects.append({**ordered, **doc})
    return objects


def opaque_resources(plan: Plan) -> list[RecordedResource]:
    """Resources that the Kubernetes provider expands at deploy time (release manifests, charts)."""
    return [r for r in plan.resources if r.type in OPAQUE_KUBERNETES_TYPES]
