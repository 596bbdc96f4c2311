"""The provider rules generator's Go parsing, and the generated rules' shape."""

from __future__ import annotations

from tpu_serving_tools import provider_rules
from tpu_serving_tools.provider_rules import generate

GO = """map[string]*schema.Schema{
	// a comment with a quote ' and a brace {
	"name": {
		Type:        schema.TypeString,
		Required:    true,
		ForceNew:    true,
		Description: `A name, see https://example.com/{x}`,
	},
	"node_config": {
		Type:     schema.TypeList,
		ForceNew: true,
		Elem: &schema.Resource{
			Schema: map[string]*schema.Schema{
				"disk_size_gb": {Type: schema.TypeInt, Optional: true, Computed: true},
				"spot":         {Type: schema.TypeBool, Optional: true, ForceNew: true},
			},
		},
	},
	"oauth_scopes": {Type: schema.TypeSet, ForceNew: true, Elem: &schema.Schema{Type: schema.TypeString}},
}"""


def test_provider_rules_parse_go_schema_literals_and_sdk_block_semantics():
    fields = dict(generate.top_level_items(GO[len(generate.SCHEMA_MAP) : -1]))
    assert set(fields) == {"name", "node_config", "oauth_scopes"}
    out: dict[str, set[str]] = {
        "forceNew": set(),
        "forceNewBlocks": set(),
        "computed": set(),
        "optionalComputed": set(),
    }
    generate.walk(generate.Source(None, ""), "", fields, "", out)  # type: ignore[arg-type]
    assert out["forceNew"] == {"name", "nodeConfig.spot", "oauthScopes"}
    assert out["forceNewBlocks"] == {"nodeConfig"}
    assert out["optionalComputed"] == {"nodeConfig.diskSizeGb"}


def test_provider_rules_force_new_follows_fields_and_blocks():
    pool = "gcp:container/nodePool:NodePool"
    assert provider_rules.force_new(pool, "nodeConfig.spot") == "nodeConfig.spot"
    assert provider_rules.force_new(pool, "nodeConfig.oauthScopes[2]") == "nodeConfig.oauthScopes"
    assert provider_rules.force_new(pool, "nodeConfig") == "nodeConfig"  # the block itself
    assert provider_rules.force_new(pool, "nodeConfig.labels.team") is None
    assert provider_rules.force_new("gcp:made/up:Type", "name") is None
