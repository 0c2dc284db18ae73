package exporter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// The Grafana dashboard that ships with perflab is a dashboard as Grafana's
// own schema has it: it decodes strictly (no field the schema lacks, none
// of a wrong type, every required one) into the types of the Grafana
// Foundation SDK, each panel's options into its plugin's, and each query
// is a Prometheus query of the datasource the dashboard asks for. (Its
// queries find a run's data in a real Prometheus: cmd/perflab's
// TestPrometheus.)
func TestGrafanaDashboardDecodesStrictly(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "grafana", "perflab-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	plugins.RegisterDefaultPlugins()
	var d dashboard.Dashboard
	if err := sdkErr(d.UnmarshalJSONStrict(b)); err != nil {
		t.Fatalf("perflab-dashboard.json: %v", err)
	}
	if err := sdkErr(d.Validate()); err != nil {
		t.Fatalf("perflab-dashboard.json: %v", err)
	}
	// The SDK's own decoding of the dashboard keeps no panel whose decoding
	// had nothing to say (its empty list of errors is an error to it): each
	// panel and query is decoded on its own.
	var raw struct {
		Panels []struct {
			Title   string
			Targets []json.RawMessage
		}
	}
	var panels []json.RawMessage
	var whole map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &whole); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(whole["panels"], &panels); err != nil {
		t.Fatal(err)
	}
	if len(panels) < 10 || len(panels) != len(d.Panels) {
		t.Fatalf("%d panels, %d decoded", len(panels), len(d.Panels))
	}
	for i, pb := range panels {
		var p dashboard.Panel
		title := raw.Panels[i].Title
		if err := sdkErr(p.UnmarshalJSONStrict(pb)); err != nil {
			t.Errorf("panel %q: %v", title, err)
		}
		if err := sdkErr(p.Validate()); err != nil {
			t.Errorf("panel %q: %v", title, err)
		}
		if len(raw.Panels[i].Targets) == 0 {
			t.Errorf("panel %q: no query", title)
		}
		for _, tg := range raw.Panels[i].Targets {
			var q prometheus.Dataquery
			if err := sdkErr(q.UnmarshalJSONStrict(tg)); err != nil || q.Expr == "" {
				t.Errorf("panel %q: query %s: %v", title, tg, err)
			}
		}
	}
}

// sdkErr is the SDK's error, nil for none: it returns its list of errors
// typed, an empty one when there are none.
func sdkErr(err error) error {
	if be, ok := err.(cog.BuildErrors); ok && len(be) == 0 {
		return nil
	}
	return err
}
