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

const webhooksHelp = `Usage: memstore webhooks ls [--db FILE|URL] [--workspace NAME] [--json]
       memstore webhooks create [--db FILE|URL] [--workspace NAME] --url URL --event TYPE [--event TYPE]... [--name NAME] [--description TEXT] [--webhook-allow-private] [--json]
       memstore webhooks rm [--db FILE|URL] [--workspace NAME] [--yes] ID
       memstore webhooks deliveries [--db FILE|URL] [--workspace NAME] [--limit N] [--json] ID

Manages a workspace's webhook endpoints (--workspace, MEMSTORE_WORKSPACE,
default "default"), working on the database itself; API keys manage them
over HTTP at /v1/organizations/webhooks. A running 'memstore serve'
delivers their events, signed with the endpoint's secret, which 'create'
prints once.

  ls          list the endpoints, newest first
  create      make an endpoint for the event types given with --event:
              ` + "%s" + `
  rm          remove an endpoint and its delivery log; it asks first on a
              terminal, --yes confirms for scripts
  deliveries  print an endpoint's latest deliveries: state, attempts,
              last status and error, next attempt

URLs must be https and reach public addresses only, unless
--webhook-allow-private is given (as to 'memstore serve'), which also
allows http. create refuses an address that is not public and a
localhost name; it does not look a name up, so an endpoint may be made
before its DNS exists: 'memstore serve' checks every address it
connects to.
`

func webhooksUsage() string {
	return fmt.Sprintf(webhooksHelp, strings.Join(memstore.WebhookEventTypes, ", "))
}

func runWebhooks(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		return usageError(e, "memstore webhooks: say what to do: ls, create, rm or deliveries; run 'memstore webhooks --help' for more")
	}
	switch args[0] {
	case "ls", "list":
		return runWebhooksList(ctx, e, args[1:])
	case "create":
		return runWebhooksCreate(ctx, e, args[1:])
	case "rm", "remove":
		return runWebhooksRemove(ctx, e, args[1:])
	case "deliveries":
		return runWebhooksDeliveries(ctx, e, args[1:])
	}
	fs := newFlags(e, "webhooks", webhooksUsage())
	if err := parse(fs, args); err != nil {
		return err
	}
	return usageError(e, "memstore webhooks: unknown subcommand %q; it is ls, create, rm or deliveries", args[0])
}

// webhooksCmd is an open webhooks subcommand: its database's endpoints,
// and the operator's caller in the workspace.
type webhooksCmd struct {
	*adminCmd
	hooks *memstore.Webhooks
}

// openWebhooks parses a webhooks subcommand's flags (with extra ones
// defined by more) and opens its database; it returns the positional
// arguments.
func openWebhooks(ctx context.Context, e env, name string, args []string, more func(fs *flag.FlagSet)) (*webhooksCmd, []string, error) {
	var private *bool
	a, pos, err := openAdmin(ctx, e, "webhooks", name, args, false, webhooksUsage(), map[string]string{"webhook-allow-private": "MEMSTORE_WEBHOOK_ALLOW_PRIVATE"}, func(fs *flag.FlagSet) {
		private = fs.Bool("webhook-allow-private", false, "allow URLs of loopback, link-local and private addresses, and http")
		if more != nil {
			more(fs)
		}
	})
	if err != nil {
		return nil, nil, err
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
	return printTable(e, out, fmt.Sprintf("no webhook endpoints in workspace %q; make one with 'memstore webhooks create --url URL --event TYPE'", wc.ws.Name),
		[]string{"ID", "STATE", "URL", "EVENTS", "NAME", "DISABLED REASON"},
		func(w *httpapi.WebhookEndpointJSON) []string {
			return []string{w.ID, w.State, w.URL, strings.Join(w.EnabledEvents, ","), w.Name, w.DisabledReason}
		})
}

func runWebhooksCreate(ctx context.Context, e env, args []string) error {
	var url, name, description string
	var events listFlag
	wc, pos, err := openWebhooks(ctx, e, "create", args, func(fs *flag.FlagSet) {
		fs.StringVar(&url, "url", "", "the `URL` deliveries are posted to (https)")
		fs.Var(&events, "event", "an event `TYPE` to deliver (repeatable)")
		fs.StringVar(&name, "name", "", "a short `NAME` for the endpoint")
		fs.StringVar(&description, "description", "", "notes about the endpoint")
	})
	if err != nil {
		return err
	}
	defer wc.close()
	switch {
	case len(pos) > 0:
		return usageError(e, "memstore webhooks create: unexpected argument %q (give the URL with --url)", pos[0])
	case url == "":
		return usageError(e, "memstore webhooks create: give the endpoint's --url")
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
	fmt.Fprintf(e.stdout, "Created webhook endpoint %s for %s in workspace %q. Its signing secret will not be shown again:\n", w.ID, w.URL, wc.ws.Name)
	fmt.Fprintln(e.stdout, w.Secret)
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
	if err := confirm(e, "webhooks rm", *yes, "remove webhook endpoint "+cell(pos[0])+" and its delivery log"); err != nil {
		return err
	}
	if err := wc.hooks.DeleteWebhook(ctx, wc.caller, pos[0]); err != nil {
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
