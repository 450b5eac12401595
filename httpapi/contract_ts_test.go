package httpapi_test

// The contract with the official TypeScript SDK (@anthropic-ai/sdk 1.14.0,
// pinned in testdata/tssdk): testdata/tssdk/script.mjs drives the real
// server through client.beta.memoryStores, .memories and .memoryVersions,
// and client.beta.sessions with its resources, events and threads
// (testdata/tssdk/dreams.mjs: client.beta.dreams), as the SDK sends them (Bearer auth, anthropic-version 2026-10-21, no
// ?beta=true), once over each backend (onEachBackend).

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/npmtest"
	"github.com/memstore/memstore/webhook"
)

// tsSDKDir holds package.json, package-lock.json and script.mjs.
const tsSDKDir = "testdata/tssdk"

func TestTypeScriptSDK(t *testing.T) { onEachBackend(t, testTypeScriptSDK) }

func testTypeScriptSDK(t *testing.T, backend harnessBackend) {
	npmtest.Need(t, tsSDKDir, "@anthropic-ai/sdk")
	h := newAPIHarness(t, harnessOptions{backend: backend})
	_, _, secret := h.newKey(t, "typescript")

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "script.mjs")
	cmd.Dir = tsSDKDir
	// Only what node needs, and no ANTHROPIC_* variable of the caller's
	// environment to steer the SDK elsewhere.
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"MEMSTORE_URL=" + h.URL,
		"MEMSTORE_API_KEY=" + secret,
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node script.mjs: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "ok: ") {
		t.Errorf("node script.mjs printed %q, want a line starting with \"ok: \"", out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// TestTypeScriptSDKWebhooks runs testdata/tssdk/webhooks.mjs against a
// server whose webhooks a deliverer delivers: the SDK makes an endpoint
// and verifies what it receives, a hosted event and one of memstore's
// own, with client.beta.webhooks.unwrap.
func TestTypeScriptSDKWebhooks(t *testing.T) {
	npmtest.Need(t, tsSDKDir, "@anthropic-ai/sdk")
	h := newAPIHarness(t, harnessOptions{})
	_, _, secret := h.newKey(t, "typescript")
	dctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		webhook.New(h.DB, webhook.Options{AllowPrivate: true, Poll: 10 * time.Millisecond}).Run(dctx)
	}()
	defer func() { stop(); <-done }()

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "webhooks.mjs")
	cmd.Dir = tsSDKDir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MEMSTORE_URL=" + h.URL, "MEMSTORE_API_KEY=" + secret}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node webhooks.mjs: %v\n%s", err, out)
	}
	if want := "ok: unwrap verified the deliveries of " + memstore.WebhookStoreCreated + " and " + memstore.WebhookMemoryCreated; !strings.HasPrefix(string(out), want) {
		t.Errorf("node webhooks.mjs printed %q", out)
	}
}

// TestTypeScriptSDKDreams runs testdata/tssdk/dreams.mjs: the SDK's
// client.beta.dreams against a server that runs dreams, once over each
// backend.
func TestTypeScriptSDKDreams(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		npmtest.Need(t, tsSDKDir, "@anthropic-ai/sdk")
		h := newAPIHarness(t, harnessOptions{backend: backend, core: []memstore.CoreOption{memstore.WithDreams(true)}})
		_, _, secret := h.newKey(t, "typescript")
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", "dreams.mjs")
		cmd.Dir = tsSDKDir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MEMSTORE_URL=" + h.URL, "MEMSTORE_API_KEY=" + secret}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node dreams.mjs: %v\n%s", err, out)
		}
		if !strings.HasPrefix(string(out), "ok: ") {
			t.Errorf("node dreams.mjs printed %q, want a line starting with \"ok: \"", out)
		}
	})
}
