"""tools/conformance/extract_epp.py: the endpoint picker's table, read from its Go sources."""

from __future__ import annotations

from tpu_serving_tools.conformance import table


def test_extract_epp_the_endpoint_picker_table_extraction_reads_the_go_sources():
    """The extractor's parsers, on excerpts written as llm-d-router v0.10.0 writes them (options.go, logging
    options, endpointpickerconfig_types.go, configloader.go)."""
    from tpu_serving_tools.conformance import extract_epp as x

    options = """
var deprecatedMetricFlags = map[string]struct{}{
	"total-queued-requests-metric":     {},
	"cache-info-metric":                {},
}

func (opts *Options) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&opts.GRPCPort, "grpc-port", opts.GRPCPort, "gRPC port used for communicating with Envoy proxy.")
	fs.StringVar(&opts.PoolGroup, "pool-group", opts.PoolGroup,
		"Kubernetes resource group")
	fs.IntSliceVar(&opts.EndpointTargetPorts, "endpoint-target-ports", opts.EndpointTargetPorts, "ports")
	fs.IntVarP(&opts.LogVerbosity, "v", "v", opts.LogVerbosity, "verbosity")
}
"""
    assert x.flags(options) == {"--grpc-port", "--pool-group", "--endpoint-target-ports", "--v"}
    assert x.rejected_flags(options) == {"--total-queued-requests-metric", "--cache-info-metric"}
    types = """
type EndpointPickerConfig struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	FeatureGates FeatureGates `json:"featureGates,omitempty"`
	Plugins []PluginSpec `json:"plugins"`
}

type PluginSpec struct {
	Name string `json:"name"`
}
"""
    assert x.config_keys(types) == {"apiVersion", "kind", "featureGates", "plugins"}
    register = (
        'const GroupName = "llm-d.ai"\nvar GroupVersion = v1.GroupVersion{Group: GroupName, Version: "v1alpha1"}\n'
    )
    loader = 'deprecatedSchemeGroupVersion = schema.GroupVersion{Group: "inference.networking.x-k8s.io", Version: "v1alpha1"}'
    assert x.api_versions(register, loader) == ("llm-d.ai/v1alpha1", "inference.networking.x-k8s.io/v1alpha1")
    t = table.load("epp-v0.10.0")
    assert t.source["by"] == "tools/conformance/extract_epp.py" and "controller-runtime@v0.23.3" in t.source["artefact"]
    assert {"queue-scorer", "metrics-data-source"} <= set(t.choices["plugins.type"])
    assert "session-affinity-scorer" in t.choices["plugins.type alpha"]
