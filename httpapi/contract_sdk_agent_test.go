package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/respjson"
)

// TestSDKSessionAgent: whatever form a session's agent was sent in (an
// ID, an agent reference, one with overrides, an object of other fields,
// none), the session's agent as the Go SDK reads it from New, Get and
// List has every field the SDK marks required, with what was sent and
// honest empty values for the rest, on each backend.
func TestSDKSessionAgent(t *testing.T) { onEachSDKEnv(t, testSDKSessionAgent) }

func testSDKSessionAgent(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	sessions := &e.sdk.Beta.Sessions
	for _, tc := range []struct {
		what  string
		agent anthropic.BetaSessionNewParamsAgentUnion
		opts  []option.RequestOption
		check func(a anthropic.BetaManagedAgentsSessionAgent) bool
		kept  string // the agent memstore's own client reads back: as sent
	}{
		{what: "an ID", agent: anthropic.BetaSessionNewParamsAgentUnion{OfString: anthropic.String("agent_01")},
			check: func(a anthropic.BetaManagedAgentsSessionAgent) bool { return a.ID == "agent_01" && a.Version == 0 }, kept: `"agent_01"`},
		{what: "a reference", agent: anthropic.BetaSessionNewParamsAgentUnion{
			OfBetaManagedAgentsAgents: &anthropic.BetaManagedAgentsAgentParams{ID: "agent_02", Version: anthropic.Int(2)}},
			check: func(a anthropic.BetaManagedAgentsSessionAgent) bool {
				return a.ID == "agent_02" && a.Version == 2 && a.Name == ""
			}, kept: `{"id":"agent_02","version":2}`},
		{what: "overrides", agent: anthropic.BetaSessionNewParamsAgentUnion{OfBetaManagedAgentsAgentWithOverridess: &anthropic.BetaManagedAgentsAgentWithOverridesParams{
			ID: "agent_03", Version: anthropic.Int(3), System: anthropic.String("Be brief."),
			Model: anthropic.BetaManagedAgentsModelConfigParams{ID: "claude-opus-4-1"}}},
			check: func(a anthropic.BetaManagedAgentsSessionAgent) bool {
				return a.ID == "agent_03" && a.Version == 3 && a.System == "Be brief." && a.Model.ID == "claude-opus-4-1" && len(a.Tools) == 0
			}, kept: `{"id":"agent_03","version":3,"system":"Be brief.","model":{"id":"claude-opus-4-1"}}`},
		{what: "other fields", opts: []option.RequestOption{option.WithJSONSet("agent", map[string]any{"id": "agent_04", "name": "Helper", "extra": 1})},
			check: func(a anthropic.BetaManagedAgentsSessionAgent) bool {
				return a.ID == "agent_04" && a.Name == "Helper" && a.JSON.ExtraFields["extra"].Raw() == "1"
			}, kept: `{"id":"agent_04","name":"Helper","extra":1}`},
		{what: "none", check: func(a anthropic.BetaManagedAgentsSessionAgent) bool { return a.ID == "" && a.Version == 0 }},
	} {
		sess, err := sessions.New(ctx, anthropic.BetaSessionNewParams{Agent: tc.agent}, tc.opts...)
		if err != nil {
			t.Fatalf("%s: New: %v", tc.what, err)
		}
		got, err := sessions.Get(ctx, sess.ID, anthropic.BetaSessionGetParams{})
		if err != nil {
			t.Fatalf("%s: Get: %v", tc.what, err)
		}
		page, err := sessions.List(ctx, anthropic.BetaSessionListParams{Limit: anthropic.Int(1)})
		if err != nil || len(page.Data) != 1 || page.Data[0].ID != sess.ID {
			t.Fatalf("%s: List: %v", tc.what, err)
		}
		// memstore's own client reads the agent back as it was sent, less
		// the fields sent with the very values memstore fills in (the
		// SDK's type "agent" here), which mean the same.
		kept, err := e.h.client(e.secret).Session(ctx, nil, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		var a, want any
		raw, ok := kept.Fields["agent"]
		json.Unmarshal(raw, &a)
		json.Unmarshal([]byte(tc.kept), &want)
		if ok != (tc.kept != "") || !jsonEqual(a, want) {
			t.Errorf("%s: the client reads the agent as %s, want %s", tc.what, raw, tc.kept)
		}
		for how, s := range map[string]*anthropic.BetaManagedAgentsSession{"New": sess, "Get": got, "List": &page.Data[0]} {
			a := s.Agent
			j := a.JSON
			for name, f := range map[string]respjson.Field{"id": j.ID, "description": j.Description, "execution_identity": j.ExecutionIdentity,
				"mcp_servers": j.MCPServers, "model": j.Model, "multiagent": j.Multiagent, "name": j.Name, "skills": j.Skills,
				"system": j.System, "tools": j.Tools, "type": j.Type, "version": j.Version} {
				// multiagent is null for a single-threaded agent.
				if !f.Valid() && !(name == "multiagent" && f.Raw() == "null") {
					t.Errorf("%s, %s: the agent lacks %s: %s", tc.what, how, name, a.RawJSON())
				}
			}
			if a.Type != "agent" || a.ExecutionIdentity.Type != "service_account" || !tc.check(a) {
				t.Errorf("%s, %s: agent %s", tc.what, how, a.RawJSON())
			}
		}
	}
}
