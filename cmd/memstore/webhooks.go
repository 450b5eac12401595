package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

const webhooksHelp = `Usage: memstore webhooks ls [BACKEND] [--json]
       memstore webhooks create [BACKEND] --endpoint-url URL --event TYPE [--event TYPE]... [--name NAME] [--description TEXT] [--json]
       memstore webhooks update [BACKEND] [--endpoint-url URL] [--event TYPE]... [--name NAME] [--description TEXT] [--json] ID
       memstore webhooks enable|disable [BACKEND] [--json] ID
       memstore webhooks rm [BACKEND] [--yes] ID
       memstore webhooks deliveries [BACKEND] [--limit N] [--json] ID

BACKEND is --db FILE|URL [--workspace NAME] [--webhook-allow-private],
or --url URL --api-key KEY.

Manages a workspace's webhook endpoints, on the database itself (--db;
--workspace, MEMSTORE_WORKSPACE, default "default") or through a running
server (--url with an API key, or MEMSTORE_URL and MEMSTORE_API_KEY: the
key's workspace). A running 'memstore serve' delivers their events,
signed with the endpoint's secret, which 'create' prints once.

  ls          list the endpoints, newest first
  create      make an endpoint for the event types given with --event:
              ` + "%s" + `
  update      change the endpoint's URL, event types (--event replaces
              them all), name or description: only what is given
  enable      send the endpoint its events again, such as after memstore
              disabled it for failing deliveries; its pending deliveries
              go out, and the events it was owed when it was disabled
  disable     send the endpoint nothing until it is enabled
  rm          remove an endpoint and its delivery log; it asks first on a
              terminal, --yes confirms for scripts
  deliveries  print an endpoint's latest deliveries: state, attempts,
              last status and error, next attempt

URLs must be https and reach public addresses only, unless the server
runs with --webhook-allow-private, or, with --db, this command is given
it (as 'memstore serve' would be), which also allows http. create and
update refuse an address that is not public and a localhost name; they
do not look a name up, so an endpoint may be made before its DNS
exists: 'memstore serve' checks every address it connects to.
`

func webhooksUsage() string {
	return fmt.Sprintf(webhooksHelp, strings.Join(memstore.WebhookEventTypes, ", "))
}

func runWebhooks(ctx context.Context, e env, args []string) error {
	args = hoistCommand(args) // memstore webhooks --url URL ls, as memstore --url URL webhooks ls
	if len(args) == 0 {
		return usageError(e, "memstore webhooks: say what to do: ls, create, update, enable, disable, rm or deliveries; run 'memstore webhooks --help' for more")
	}
	switch args[0] {
	case "ls", "list":
		return runWebhooksList(ctx, e, args[1:])
	case "create":
		return runWebhooksCreate(ctx, e, args[1:])
	case "update":
		return runWebhooksUpdate(ctx, e, args[1:])
	case "enable":
		return runWebhooksState(ctx, e, args[1:], memstore.WebhookEnabled)
	case "disable":
		return runWebhooksState(ctx, e, args[1:], memstore.WebhookDisabled)
	case "rm", "remove":
		return runWebhooksRemove(ctx, e, args[1:])
	case "deliveries":
		return runWebhooksDeliveries(ctx, e, args[1:])
	}
	fs := newFlags(e, "webhooks", webhooksUsage())
	if err := parse(fs, args); err != nil {
		return err
	}
	return usageError(e, "memstore webhooks: unknown subcommand %q; it is ls, create, update, enable, disable, rm or deliveries", args[0])
}

// webhooksCmd is an open webhooks subcommand: the endpoints of its
// database or server, and the caller in the workspace.
type webhooksCmd struct {
	*adminCmd
	hooks memstore.WebhookService
}

// openWebhooks parses a webhooks subcommand's flags (with extra ones
// defined by more) and opens its backend; it returns the positional
// arguments.
func openWebhooks(ctx context.Context, e env, name string, args []string, more func(fs *flag.FlagSet)) (*webhooksCmd, []string, error) {
	var private *bool
	a, pos, err := openAdmin(ctx, e, "webhooks", name, args, false, webhooksUsage(), map[string]string{"webhook-allow-private": "MEMSTORE_WEBHOOK_ALLOW_PRIVATE"}, func(fs *flag.FlagSet) {
		private = fs.Bool("webhook-allow-private", false, "with --db, allow URLs of loopback, link-local and private addresses, and http")
		if more != nil {
			more(fs)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if a.client != nil {
		if *private {
			a.close()
			return nil, nil, usageError(e, "memstore webhooks %s: --webhook-allow-private goes with --db; through a server, its own --webhook-allow-private decides", name)
		}
		return &webhooksCmd{adminCmd: a, hooks: a.client}, pos, nil
	}
	return &webhooksCmd{adminCmd: a, hooks: memstore.NewWebhooks(a.db, memstore.WebhooksAllowPrivate(*private))}, pos, nil
}

func runWebhooksList(ctx context.Context, e env, args []string) error {
	wc, pos, err := openWebhooks(ctx, e, "ls", args, nil)
	if err != nil {
		return err
	}
	defer wc.close()
	if len(pos) > 0 {
		return usageError(e, "memstore webhooks ls: unexpected argument %q", pos[0])
	}
	out := []httpapi.WebhookEndpointJSON{}
	f := memstore.WebhookFilter{Limit: memstore.MaxPageSize}
	for {
		items, more, err := wc.hooks.Webhooks(ctx, wc.caller, f)
		if err != nil {
			return err
		}
		for i := range items {
			out = append(out, httpapi.NewWebhookEndpointJSON(&items[i]))
		}
		if !more {
			break
		}
		f.AfterID = items[len(items)-1].ID
	}
	if wc.json {
		return printJSON(e.stdout, out)
	}
	return printTable(e, out, fmt.Sprintf("no webhook endpoints in %s; make one with 'memstore webhooks create --endpoint-url URL --event TYPE'", wc.where()),
		[]string{"ID", "STATE", "URL", "EVENTS", "NAME", "DISABLED REASON"},
		func(w *httpapi.WebhookEndpointJSON) []string {
			return []string{w.ID, w.State, w.URL, strings.Join(w.EnabledEvents, ","), w.Name, w.DisabledReason}
		})
}

// endpointFlags defines the flags of an endpoint's fields on fs.
func endpointFlags(fs *flag.FlagSet, url, name, description *string, events *listFlag) {
	fs.StringVar(url, "endpoint-url", "", "the `URL` deliveries are posted to (https)")
	fs.Var(events, "event", "an event `TYPE` to deliver (repeatable)")
	fs.StringVar(name, "name", "", "a short `NAME` for the endpoint")
	fs.StringVar(description, "description", "", "notes about the endpoint")
}

// errEndpointURL is the usage error of a webhooks subcommand given --url
// but no --endpoint-url: --url names the server, as everywhere.
func errEndpointURL(e env, cmd string) error {
	return usageError(e, "memstore webhooks %s: give the endpoint's address with --endpoint-url URL; --url names the memstore server", cmd)
}

func runWebhooksCreate(ctx context.Context, e env, args []string) error {
	if givenFlag(args, "url") && !givenFlag(args, "endpoint-url") {
		return errEndpointURL(e, "create")
	}
	var url, name, description string
	var events listFlag
	wc, pos, err := openWebhooks(ctx, e, "create", args, func(fs *flag.FlagSet) {
		endpointFlags(fs, &url, &name, &description, &events)
	})
	if err != nil {
		return err
	}
	defer wc.close()
	switch {
	case len(pos) > 0:
		return usageError(e, "memstore webhooks create: unexpected argument %q (give the URL with --endpoint-url)", pos[0])
	case url == "":
		return usageError(e, "memstore webhooks create: give the endpoint's --endpoint-url")
	case len(events) == 0:
		return usageError(e, "memstore webhooks create: give at least one --event, of %s", strings.Join(memstore.WebhookEventTypes, ", "))
	}
	w, err := wc.hooks.CreateWebhook(ctx, wc.caller, memstore.WebhookCreate{URL: url, EnabledEvents: events, Name: name, Description: description})
	if err != nil {
		return err
	}
	if wc.json {
		return printJSON(e.stdout, httpapi.NewWebhookEndpointJSON(w))
	}
	fmt.Fprintf(e.stdout, "Created webhook endpoint %s for %s in %s. Its signing secret will not be shown again:\n", w.ID, w.URL, wc.where())
	fmt.Fprintln(e.stdout, w.Secret)
	return nil
}

func runWebhooksUpdate(ctx context.Context, e env, args []string) error {
	var url, name, description string
	var events listFlag
	var fs *flag.FlagSet
	wc, pos, err := openWebhooks(ctx, e, "update", args, func(f *flag.FlagSet) {
		fs = f
		endpointFlags(fs, &url, &name, &description, &events)
	})
	if err != nil {
		return err
	}
	defer wc.close()
	if len(pos) != 1 {
		return usageError(e, "memstore webhooks update: give the ID of one endpoint; 'memstore webhooks ls' lists them")
	}
	var u memstore.WebhookUpdate
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "endpoint-url":
			u.URL = &url
		case "event":
			u.EnabledEvents = events
		case "name":
			u.Name = &name
		case "description":
			u.Description = &description
		}
	})
	if u.URL == nil && u.EnabledEvents == nil && u.Name == nil && u.Description == nil {
		return usageError(e, "memstore webhooks update: say what to change: --endpoint-url, --event, --name or --description ('webhooks enable' and 'disable' change its state)")
	}
	w, err := wc.hooks.UpdateWebhook(ctx, wc.caller, pos[0], u)
	if err != nil {
		return err
	}
	if wc.json {
		return printJSON(e.stdout, httpapi.NewWebhookEndpointJSON(w))
	}
	fmt.Fprintf(e.stdout, "Updated webhook endpoint %s: %s, for %s.\n", w.ID, w.URL, strings.Join(w.EnabledEvents, ", "))
	return nil
}

// runWebhooksState enables or disables an endpoint.
func runWebhooksState(ctx context.Context, e env, args []string, state memstore.WebhookState) error {
	cmd := "enable"
	if state == memstore.WebhookDisabled {
		cmd = "disable"
	}
	wc, pos, err := openWebhooks(ctx, e, cmd, args, nil)
	if err != nil {
		return err
	}
	defer wc.close()
	if len(pos) != 1 {
		return usageError(e, "memstore webhooks %s: give the ID of one endpoint; 'memstore webhooks ls' lists them", cmd)
	}
	w, err := wc.hooks.UpdateWebhook(ctx, wc.caller, pos[0], memstore.WebhookUpdate{State: &state})
	if err != nil {
		return err
	}
	if wc.json {
		return printJSON(e.stdout, httpapi.NewWebhookEndpointJSON(w))
	}
	if state == memstore.WebhookEnabled {
		fmt.Fprintf(e.stdout, "Enabled webhook endpoint %s: its pending deliveries go out, and new events are sent to it.\n", w.ID)
	} else {
		fmt.Fprintf(e.stdout, "Disabled webhook endpoint %s: nothing is sent to it until 'memstore webhooks enable %s'.\n", w.ID, w.ID)
	}
	return nil
}

func runWebhooksRemove(ctx context.Context, e env, args []string) error {
	var yes *bool
	wc, pos, err := openWebhooks(ctx, e, "rm", args, func(fs *flag.FlagSet) { yes = addYesFlag(fs) })
	if err != nil {
		return err
	}
	defer wc.close()
	if len(pos) != 1 {
		return usageError(e, "memstore webhooks rm: give the ID of one endpoint; 'memstore webhooks ls' lists them")
	}
	// Looked up first, so that a wrong ID is said before anything is asked.
	w, err := wc.hooks.Webhook(ctx, wc.caller, pos[0])
	if err != nil {
		return err
	}
	if err := confirm(e, "webhooks rm", *yes, "remove webhook endpoint "+cell(w.ID)+" ("+cell(w.URL)+") and its delivery log"); err != nil {
		return err
	}
	if err := wc.hooks.DeleteWebhook(ctx, wc.caller, w.ID); err != nil {
		return err
	}
	if wc.json {
		return printJSON(e.stdout, httpapi.DeletedJSON{Type: "webhook_endpoint_deleted", ID: pos[0]})
	}
	fmt.Fprintf(e.stdout, "Removed webhook endpoint %s and its deliveries.\n", pos[0])
	return nil
}

func runWebhooksDeliveries(ctx context.Context, e env, args []string) error {
	limit := 0
	wc, pos, err := openWebhooks(ctx, e, "deliveries", args, func(fs *flag.FlagSet) {
		fs.IntVar(&limit, "limit", memstore.DefaultPageSize, fmt.Sprintf("print the latest `N` deliveries, 1-%d", memstore.MaxPageSize))
	})
	if err != nil {
		return err
	}
	defer wc.close()
	if len(pos) != 1 {
		return usageError(e, "memstore webhooks deliveries: give the ID of one endpoint; 'memstore webhooks ls' lists them")
	}
	if limit < 1 || limit > memstore.MaxPageSize {
		return usageError(e, "memstore webhooks deliveries: --limit must be from 1 to %d, not %d", memstore.MaxPageSize, limit)
	}
	ds, err := wc.hooks.WebhookDeliveries(ctx, wc.caller, pos[0], limit)
	if err != nil {
		return err
	}
	out := make([]httpapi.WebhookDeliveryJSON, len(ds))
	for i := range ds {
		out[i] = httpapi.NewWebhookDeliveryJSON(&ds[i])
	}
	if wc.json {
		return printJSON(e.stdout, out)
	}
	if len(out) == 0 {
		fmt.Fprintf(e.stderr, "no deliveries to %s yet\n", pos[0])
		return nil
	}
	tw := newTable(e.stdout)
	row(tw, "EVENT", "TYPE", "STATE", "ATTEMPTS", "LAST", "STATUS", "NEXT", "LAST ERROR")
	for i, d := range out {
		next := ""
		if ds[i].State == memstore.DeliveryPending {
			next = fmtTime(ds[i].NextAttemptAt)
		}
		status := ""
		if d.LastStatusCode != 0 {
			status = strconv.Itoa(d.LastStatusCode)
		}
		row(tw, d.EventID, d.EventType, d.State, strconv.Itoa(d.Attempts), fmtTimePtr(ds[i].LastAttemptAt), status, next, oneLine(d.LastError))
	}
	return tw.Flush()
}

// oneLine is s on one line, for a table's cell.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// givenFlag reports whether args holds the flag name, as -name, --name or
// --name=value, before a "--" that ends the flags.
func givenFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		a = strings.TrimLeft(a, "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}
