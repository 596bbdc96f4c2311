"""``admission``: would the cloud APIs accept each GCP resource of the plan as it is written?

Every rule here is the model's own, with the API reference (or the provider's API documentation) it
was read from; none is taken from the library. One finding per GCP resource the plan creates: the
rules of its type, all of them, or "no rules known" (which fails, so a new resource type cannot
pass unexamined).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL, RESOURCE_POLICY
from tpu_serving_tools.runtime import gcp_facts as facts
from tpu_serving_tools.runtime.admission_placement import placement, pool_version, workload_policy_placement
from tpu_serving_tools.runtime.planview import UNKNOWN, PlanView
from tpu_serving_tools.runtime.planview import known_text as _text
from tpu_serving_tools.runtime.result import CategoryResult, Finding

Inputs = Mapping[str, Any]


@dataclass(frozen=True)
class Rule:
    """One admission rule of a resource type: a check returning the problems it finds."""

    name: str
    check: Callable[[Inputs], Iterator[str]]
    source: str


def _name_rule(field: str, pattern: str, low: int, high: int, source: str) -> Rule:
    regex = re.compile(pattern)

    def check(inputs: Inputs) -> Iterator[str]:
        value = _text(inputs.get(field))
        if value is None:
            return
        if not low <= len(value) <= high:
            yield f"{field} {value!r} is {len(value)} characters; the API takes {low} to {high}"
        elif not regex.fullmatch(value):
            yield f"{field} {value!r} does not match {pattern}"

    return Rule(f"{field} format", check, source)


def _labels_rule(field: str) -> Rule:
    key = re.compile(r"[a-z][a-z0-9_-]{0,62}")
    value = re.compile(r"[a-z0-9_-]{0,63}")

    def check(inputs: Inputs) -> Iterator[str]:
        labels = inputs.get(field)
        if not isinstance(labels, Mapping):
            return
        if len(labels) > 64:
            yield f"{field} has {len(labels)} labels; at most 64"
        for k, v in labels.items():
            if not key.fullmatch(str(k)):
                yield f"{field} key {k!r} is not a label key (lowercase letter first, then [a-z0-9_-], up to 63)"
            if isinstance(v, str) and v != UNKNOWN and not value.fullmatch(v):
                yield f"{field}[{k}] = {v!r} is not a label value ([a-z0-9_-], up to 63)"

    return Rule(f"{field} label syntax", check, facts.LABEL_RULES)


def _enum_rule(path: tuple[str, ...], allowed: frozenset[str], source: str) -> Rule:
    def check(inputs: Inputs) -> Iterator[str]:
        value: Any = inputs
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if _text(value) is not None and value not in allowed:
            yield f"{'.'.join(path)} = {value!r}; the API takes {', '.join(sorted(allowed))}"

    return Rule(f"{'.'.join(path)} enum", check, source)


def _address_purpose(inputs: Inputs) -> Iterator[str]:
    """A purpose is for internal addresses only (the address type defaults to EXTERNAL)."""
    if _text(inputs.get("purpose")) is not None and inputs.get("addressType", "EXTERNAL") != "INTERNAL":
        yield f"purpose = {inputs.get('purpose')!r} on an address of type {inputs.get('addressType', 'EXTERNAL')!r}"


# --------------------------------------------------------------------------- Cloud Monitoring alert policies

_PROM_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_PROMQL_WORDS = frozenset(
    [
        "sum",
        "avg",
        "min",
        "max",
        "count",
        "stddev",
        "stdvar",
        "topk",
        "bottomk",
        "quantile",
        "count_values",
        "group",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "and",
        "or",
        "unless",
        "offset",
        "rate",
        "irate",
        "increase",
        "delta",
        "idelta",
        "deriv",
        "absent",
        "absent_over_time",
        "avg_over_time",
        "min_over_time",
        "max_over_time",
        "sum_over_time",
        "count_over_time",
        "last_over_time",
        "histogram_quantile",
        "clamp",
        "clamp_min",
        "clamp_max",
        "abs",
        "ceil",
        "floor",
        "round",
        "label_replace",
        "label_join",
        "vector",
        "scalar",
        "time",
        "timestamp",
        "sort",
        "sort_desc",
        "changes",
        "resets",
        "predict_linear",
        "inf",
        "nan",
    ]
)
_METRIC = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def promql_metrics(query: str) -> set[str]:
    """Metric names a PromQL expression reads (selectors' names; not functions, keywords or labels)."""
    q = re.sub(r'"(?:[^"\\]|\\.)*"', "", query)  # string literals
    q = re.sub(r"\{[^}]*\}", " ", q)  # label matchers
    q = re.sub(r"\[[^\]]*\]", " ", q)  # range and subquery durations
    q = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", q)  # label lists
    names = set()
    for m in _METRIC.finditer(q):
        word, rest = m.group(0), q[m.end() :].lstrip()
        if word in _PROMQL_WORDS or rest.startswith("("):
            continue
        names.add(word)
    return names


def builtin_metric(name: str) -> bool:
    """Whether ``name`` is a Cloud Monitoring built-in metric as PromQL names it (``<domain>:<path>``)."""
    return ":" in name and name.split(":", 1)[0] in facts.PROMQL_BUILTIN_DOMAINS


def _promql_conditions(inputs: Inputs) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for i, c in enumerate(inputs.get("conditions") or ()):
        q = c.get("conditionPrometheusQueryLanguage") if isinstance(c, Mapping) else None
        if isinstance(q, Mapping):
            yield i, q


def _alert_rule_names(inputs: Inputs) -> Iterator[str]:
    for i, q in _promql_conditions(inputs):
        for field in ("alertRule", "ruleGroup"):
            value = _text(q.get(field))
            if value and not _PROM_LABEL.fullmatch(value):
                yield f"conditions[{i}].{field} {value!r} is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)"


def _metric_validation(inputs: Inputs) -> Iterator[str]:
    for i, q in _promql_conditions(inputs):
        if q.get("disableMetricValidation") is True:
            continue
        missing = sorted(m for m in promql_metrics(str(q.get("query", ""))) if not builtin_metric(m))
        if missing:
            yield (
                f"conditions[{i}] reads {', '.join(missing)}, which a new project has not ingested yet: "
                "Cloud Monitoring refuses the policy (400) unless disableMetricValidation is true"
            )


def _kube_state_metrics(inputs: Inputs) -> Iterator[str]:
    for i, q in _promql_conditions(inputs):
        unsent = sorted(
            m
            for m in promql_metrics(str(q.get("query", "")))
            if m.startswith("kube_") and m not in facts.GKE_KUBE_STATE_METRICS
        )
        if unsent:
            yield (
                f"conditions[{i}] reads {', '.join(unsent)}, which GKE's managed kube state metrics do not send: "
                "the query has no series, ever"
            )


def _promql_durations(inputs: Inputs) -> Iterator[str]:
    for i, q in _promql_conditions(inputs):
        if not str(q.get("query", "")).strip():
            yield f"conditions[{i}].query is empty"
        interval = _text(q.get("evaluationInterval"))
        if interval is not None:
            m = re.fullmatch(r"(\d+)s", interval)
            if not m or int(m.group(1)) <= 0 or int(m.group(1)) % 30:
                yield f"conditions[{i}].evaluationInterval {interval!r} is not a positive multiple of 30 seconds"
        duration = _text(q.get("duration"))
        if duration is not None and not re.fullmatch(r"\d+(\.\d+)?s", duration):
            yield f"conditions[{i}].duration {duration!r} is not a zero or positive duration in seconds"


def _conditions_count(inputs: Inputs) -> Iterator[str]:
    n = len(inputs.get("conditions") or ())
    if not 1 <= n <= 6:
        yield f"{n} conditions; an alert policy takes 1 to 6"
    if not _text(inputs.get("displayName")):
        yield "displayName is required"


def _threshold_conditions(inputs: Inputs) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for i, c in enumerate(inputs.get("conditions") or ()):
        t = c.get("conditionThreshold") if isinstance(c, Mapping) else None
        if isinstance(t, Mapping):
            yield i, t


_FILTER_TYPES = re.compile(r'\b(metric|resource)\.type\s*=\s*"[^"]+"')


def _threshold_filters(inputs: Inputs) -> Iterator[str]:
    for i, t in _threshold_conditions(inputs):
        text = _text(t.get("filter"))
        if text is None:
            continue
        named = {m.group(1) for m in _FILTER_TYPES.finditer(text)}
        for kind in ("metric", "resource"):
            if kind not in named:
                yield f"conditions[{i}].conditionThreshold.filter names no {kind}.type"
        if len(text) > 2048:
            yield f"conditions[{i}].conditionThreshold.filter is {len(text)} characters; at most 2048"


def _seconds(value: str | None) -> int | None:
    m = re.fullmatch(r"(\d+)s", value or "")
    return int(m.group(1)) if m else None


def _threshold_fields(inputs: Inputs) -> Iterator[str]:
    for i, t in _threshold_conditions(inputs):
        at = f"conditions[{i}].conditionThreshold"
        comparison = _text(t.get("comparison"))
        if comparison is not None and comparison not in facts.THRESHOLD_COMPARISONS:
            yield f"{at}.comparison {comparison!r}; the API takes {', '.join(sorted(facts.THRESHOLD_COMPARISONS))}"
        duration = _text(t.get("duration"))
        seconds = _seconds(duration)
        if duration is not None and (seconds is None or seconds % 60):
            yield f"{at}.duration {duration!r} is not a multiple of a minute in seconds"
        if _text(t.get("evaluationMissingData")) and duration is not None and (seconds or 0) < 60:
            yield f"{at}.evaluationMissingData needs a duration of 60s or more, not {duration!r}"
        for j, a in enumerate(t.get("aggregations") or ()):
            aligner, period = _text(a.get("perSeriesAligner")), _text(a.get("alignmentPeriod"))
            if aligner and aligner != "ALIGN_NONE" and ((_seconds(period) or 0) < 60):
                yield f"{at}.aggregations[{j}] aligns with {aligner} over {period!r}; the period must be 60s or more"


def _log_metric(inputs: Inputs) -> Iterator[str]:
    if not inputs.get("filter"):
        yield "filter is required and not empty"
    descriptor = inputs.get("metricDescriptor")
    labels = descriptor.get("labels") if isinstance(descriptor, Mapping) else None
    keys = {str(label.get("key")) for label in labels or () if isinstance(label, Mapping)}
    for label in labels or ():
        value_type = _text(label.get("valueType")) if isinstance(label, Mapping) else None
        if value_type is not None and value_type not in facts.LABEL_VALUE_TYPES:
            yield f"label {label.get('key')!r} valueType {value_type!r}; the API takes {sorted(facts.LABEL_VALUE_TYPES)}"
    extractors = inputs.get("labelExtractors")
    extracted = set(extractors) if isinstance(extractors, Mapping) else set()
    for key in sorted(keys - extracted):
        yield f"metricDescriptor label {key!r} has no labelExtractors entry"
    for key in sorted(extracted - keys):
        yield f"labelExtractors[{key!r}] extracts a label the metricDescriptor does not declare"


def _dashboard_json(inputs: Inputs) -> Iterator[str]:
    raw = _text(inputs.get("dashboardJson"))
    if raw is None:
        return
    try:
        doc = json.loads(raw)
    except ValueError as e:
        yield f"dashboardJson is not JSON: {e}"
        return
    if not isinstance(doc, Mapping) or not doc.get("displayName"):
        yield "dashboardJson has no displayName"
        return
    mosaic = doc.get("mosaicLayout")
    if isinstance(mosaic, Mapping):
        columns = int(mosaic.get("columns", 12))
        if not 1 <= columns <= 48:
            yield f"mosaicLayout.columns {columns}; 1 to 48"
        for t in mosaic.get("tiles") or ():
            if int(t.get("xPos", 0)) + int(t.get("width", 1)) > columns:
                yield f"tile {t.get('widget', {}).get('title', '?')!r} ends past column {columns}"


# --------------------------------------------------------------------------- buckets, networks and IAM


def _bucket_name(inputs: Inputs) -> Iterator[str]:
    name = _text(inputs.get("name"))
    if name is None:
        return
    parts = name.split(".")
    if not 3 <= len(name) <= (222 if len(parts) > 1 else 63) or any(len(x) > 63 for x in parts):
        yield f"name {name!r} is {len(name)} characters; 3 to 63 (222 with dots, 63 per part)"
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*[a-z0-9]", name):
        yield f"name {name!r} has characters other than a-z 0-9 . _ - or does not start and end with a letter or digit"
    if name.startswith("goog") or "google" in name:
        yield f"name {name!r} begins with 'goog' or contains 'google'"


def _subnet(inputs: Inputs) -> Iterator[str]:
    cidr = _text(inputs.get("ipCidrRange"))
    purpose = _text(inputs.get("purpose")) or "PRIVATE"
    if cidr is not None:
        try:
            net = ipaddress.ip_network(cidr)
        except ValueError:
            yield f"ipCidrRange {cidr!r} is not a network address"
            return
        if purpose in facts.PROXY_ONLY_PURPOSES and net.prefixlen > facts.PROXY_ONLY_MAX_PREFIX:
            yield f"proxy-only subnet {cidr} is smaller than /{facts.PROXY_ONLY_MAX_PREFIX} (64 addresses)"
    role = _text(inputs.get("role"))
    if role is not None and purpose not in facts.PROXY_ONLY_PURPOSES:
        yield f"role {role!r} is only for proxy-only subnets (purpose {', '.join(sorted(facts.PROXY_ONLY_PURPOSES))})"


def _iam_member(inputs: Inputs) -> Iterator[str]:
    role = _text(inputs.get("role"))
    if role is not None and not re.fullmatch(r"(roles/[a-zA-Z0-9_.]+|(projects|organizations)/[^/]+/roles/\S+)", role):
        yield f"role {role!r} is not roles/<name> or a custom role"
    member = _text(inputs.get("member"))
    if member is not None and ":" in member and member.split(":", 1)[0] not in facts.IAM_MEMBER_PREFIXES:
        yield f"member {member!r} has an unknown principal type {member.split(':', 1)[0]!r}"
    condition = inputs.get("condition")
    if isinstance(condition, Mapping) and not (_text(condition.get("title")) and _text(condition.get("expression"))):
        yield "condition needs a title and an expression"


RULES: dict[str, tuple[Rule, ...]] = {
    "gcp:container/cluster:Cluster": (
        _name_rule("name", r"[a-z]([-a-z0-9]*[a-z0-9])?", 1, 40, facts.GKE_NAMES),
        _labels_rule("resourceLabels"),
        _enum_rule(("releaseChannel", "channel"), facts.RELEASE_CHANNELS, facts.GKE_RELEASE_CHANNEL),
    ),
    "gcp:container/nodePool:NodePool": (
        _name_rule("name", r"[a-z]([-a-z0-9]*[a-z0-9])?", 1, 40, facts.GKE_NAMES),
        Rule("placementPolicy type", placement, f"{facts.GKE_TPU_PLACEMENT}; {facts.TPU7X_WORKLOAD_POLICY}"),
    ),
    RESOURCE_POLICY: (
        _name_rule("name", r"[a-z]([-a-z0-9]*[a-z0-9])?", 1, 63, facts.COMPUTE_NAMES),
        _enum_rule(("workloadPolicy", "type"), facts.WORKLOAD_POLICY_TYPES, facts.WORKLOAD_POLICY_TYPE),
    ),
    "gcp:storage/bucket:Bucket": (
        Rule("name format", _bucket_name, facts.GCS_BUCKET_NAMES),
        _labels_rule("labels"),
        _enum_rule(("storageClass",), facts.GCS_STORAGE_CLASSES, facts.GCS_STORAGE_CLASS_DOC),
    ),
    "gcp:serviceaccount/account:Account": (
        _name_rule("accountId", r"[a-z]([-a-z0-9]*[a-z0-9])", 6, 30, facts.IAM_ACCOUNT_ID),
    ),
    "gcp:projects/service:Service": (
        _name_rule("service", r"[a-z0-9.-]+\.googleapis\.com", 1, 253, facts.SERVICE_USAGE),
    ),
    "gcp:projects/iAMMember:IAMMember": (Rule("role, member, condition", _iam_member, facts.IAM_POLICY),),
    "gcp:serviceaccount/iAMMember:IAMMember": (Rule("role, member, condition", _iam_member, facts.IAM_POLICY),),
    "gcp:storage/bucketIAMMember:BucketIAMMember": (Rule("role, member, condition", _iam_member, facts.IAM_POLICY),),
    "gcp:compute/subnetwork:Subnetwork": (
        _name_rule("name", r"[a-z]([-a-z0-9]*[a-z0-9])?", 1, 63, facts.COMPUTE_NAMES),
        Rule("range, purpose and role", _subnet, facts.PROXY_ONLY_SUBNETS),
    ),
    "gcp:compute/address:Address": (
        _name_rule("name", r"[a-z]([-a-z0-9]*[a-z0-9])?", 1, 63, facts.COMPUTE_NAMES),
        _enum_rule(("addressType",), facts.ADDRESS_TYPES, facts.COMPUTE_ADDRESS),
        _enum_rule(("purpose",), facts.ADDRESS_PURPOSES, facts.COMPUTE_ADDRESS),
        Rule("purpose only on an internal address", _address_purpose, facts.COMPUTE_ADDRESS),
    ),
    "gcp:compute/router:Router": (_name_rule("name", r"[a-z]([-a-z0-9]*[a-z0-9])?", 1, 63, facts.COMPUTE_NAMES),),
    "gcp:compute/routerNat:RouterNat": (_name_rule("name", r"[a-z]([-a-z0-9]*[a-z0-9])?", 1, 63, facts.COMPUTE_NAMES),),
    "gcp:monitoring/alertPolicy:AlertPolicy": (
        Rule("displayName and 1-6 conditions", _conditions_count, facts.ALERT_POLICY_API),
        Rule("alertRule and ruleGroup are label names", _alert_rule_names, facts.ALERT_RULE_NAMES),
        Rule("metrics exist or validation is off", _metric_validation, facts.ALERT_METRIC_VALIDATION),
        Rule("query, duration, evaluation interval", _promql_durations, facts.ALERT_PROMQL_FIELDS),
        Rule("kube state metrics GKE sends", _kube_state_metrics, facts.KUBE_STATE_METRICS_PACKAGES),
        _enum_rule(("combiner",), frozenset({"AND", "OR", "AND_WITH_MATCHING_RESOURCE"}), facts.ALERT_POLICY_API),
        _enum_rule(("severity",), frozenset({"CRITICAL", "ERROR", "WARNING"}), facts.ALERT_POLICY_API),
        Rule("threshold filters name the metric and resource types", _threshold_filters, facts.ALERT_THRESHOLD_FILTER),
        Rule("threshold comparison, duration, aggregations", _threshold_fields, facts.ALERT_THRESHOLD_FIELDS),
    ),
    "gcp:logging/metric:Metric": (
        _name_rule("name", r"[A-Za-z0-9_.,+!*'()%-][A-Za-z0-9_.,+!*'()%/-]*", 1, 100, facts.LOG_METRIC_NAME),
        _enum_rule(("metricDescriptor", "metricKind"), facts.METRIC_KINDS, facts.LOG_METRIC_DESCRIPTOR),
        _enum_rule(("metricDescriptor", "valueType"), facts.METRIC_VALUE_TYPES, facts.LOG_METRIC_DESCRIPTOR),
        Rule("filter, label types and label extractors", _log_metric, facts.LOG_METRIC_DESCRIPTOR),
    ),
    "gcp:monitoring/dashboard:Dashboard": (Rule("dashboardJson", _dashboard_json, facts.DASHBOARD_API),),
    "gcp:artifactregistry/repository:Repository": (
        _enum_rule(("mode",), facts.AR_REPOSITORY_MODES, facts.AR_REPOSITORY_MODE),
        _enum_rule(
            ("remoteRepositoryConfig", "dockerRepository", "publicRepository"),
            facts.AR_PUBLIC_REPOSITORIES,
            facts.AR_PUBLIC_REPOSITORY,
        ),
    ),
}
"""Admission rules per GCP resource type (Pulumi type token)."""


def _pool_location(view: PlanView, r: Mapping[str, Any]) -> Iterator[str]:
    """A node pool's location against the cluster it names (by the resource its ``cluster`` input comes from)."""
    if r["type"] != NODE_POOL:
        return
    for cluster in view.input_source(r, "cluster"):
        if cluster["type"] != CLUSTER:
            continue
        pool_at, cluster_at = _text(r["inputs"].get("location")), _text(cluster["inputs"].get("location"))
        if pool_at and cluster_at and pool_at != cluster_at:
            yield f"location {pool_at!r} is not its cluster {cluster['name']}'s location {cluster_at!r}"


def findings(view: PlanView) -> list[Finding]:
    """One finding per GCP resource: every problem its type's rules find, or none."""
    out = []
    for r in view.resources:
        if not r.get("custom") or not str(r["type"]).startswith("gcp:"):
            continue
        subject = f"admission {r['type'].split(':')[-1]} {r['name']}"
        rules = RULES.get(r["type"])
        if rules is None:
            out.append(Finding(subject, False, f"no admission rules known for {r['type']}: add them, with sources"))
            continue
        problems = [f"{p} ({rule.source})" for rule in rules for p in rule.check(r["inputs"])]
        problems += [f"{p} ({facts.GKE_NODE_POOL_LOCATION})" for p in _pool_location(view, r)]
        problems += [f"{p} ({facts.WORKLOAD_POLICY_PLACES})" for p in workload_policy_placement(view, r)]
        problems += [f"{p} ({facts.TPU7X_MIN_GKE})" for p in pool_version(view, r)]
        out.append(Finding(subject, not problems, "; ".join(problems) or f"{len(rules)} rule(s) of {r['type']} hold"))
    return out


def check(view: PlanView) -> CategoryResult:
    """The ``admission`` category for one plan."""
    return CategoryResult("admission", findings(view))
