package memstore_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/memstore/memstore/webhook"
)

// flatText returns the text of the file at path with every run of white
// space made one space, so that a phrase may wrap over lines.
func flatText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// TestWebhookDocs keeps the documentation telling operators what bounds
// webhook delivery and how they may change it: the cap of attempts in
// flight to one endpoint and a workspace's share of a server's
// deliveries (as the deliverer enforces them), in docs/webhooks.md and
// docs/api.md's Webhooks section, and there the deliveries of one
// endpoint a server holds and every flag of `memstore
// serve` that governs delivery.
func TestWebhookDocs(t *testing.T) {
	inFlight := fmt.Sprintf("at most %d attempts at once to one endpoint", webhook.MaxInFlightPerEndpoint)
	share := fmt.Sprintf("at most %d deliveries of one workspace (of %d in all)", webhook.DefaultMaxHeldPerWorkspace(webhook.Pool), webhook.Pool)
	for _, want := range []string{inFlight, share} {
		if !strings.Contains(flatText(t, "docs/webhooks.md"), want) {
			t.Errorf("docs/webhooks.md does not say %q", want)
		}
	}
	_, api, ok := strings.Cut(flatText(t, "docs/api.md"), " ## Webhooks ")
	if !ok {
		t.Fatal("docs/api.md has no section Webhooks")
	}
	api, _, _ = strings.Cut(api, " ## ")
	held := fmt.Sprintf("holds at most %d of its deliveries", webhook.MaxHeldPerEndpoint)
	for _, want := range []string{inFlight, share, held, "--webhook-retry-min", "--webhook-retry-max", "--webhook-attempts", "--webhook-allow-private",
		"--webhook-max-deliveries", "--webhook-max-deliveries-per-workspace"} {
		if !strings.Contains(api, want) {
			t.Errorf("docs/api.md, Webhooks, does not say %q", want)
		}
	}
}
