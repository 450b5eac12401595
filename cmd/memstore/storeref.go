package main

import (
	"context"
	"strings"

	"github.com/memstore/memstore"
)

// Every command that names a store (--store, or a store argument) takes
// its ID or its name, and resolveStore turns either into the ID.

// storeNameHelp says how a store is named, for the commands' help.
const storeNameHelp = `A store is named by its ID (memstore_...) or by its name; a name shared
by several stores is refused with their IDs, to pick one.`

// onArchived are the commands that can act on an archived store, whose
// --store or store argument finds one by name: the reads, redact, and
// the commands on the store itself. The others write, which an archived
// store refuses.
var onArchived = map[string]bool{
	"ls": true, "cat": true, "log": true, "show": true, "diff": true, "redact": true,
	"grep": true, "watch": true, "export": true,
	"stores show": true, "stores archive": true, "stores rm": true, "stores diff": true,
	"sessions ls": true, "sessions detach": true,
}

// resolveStore returns the ID of the store that ref names: an ID
// (memstore_...) as it is, otherwise the name of a store the caller sees
// (a session's attached stores, else the workspace's). A live store's
// name wins over an archived one's; archived stores count only when
// archived is true, for the commands that can act on them (reads and
// deletions). No match, or several, is an error that says what to do.
func (c *conn) resolveStore(ctx context.Context, ref string, archived bool) (string, error) {
	if strings.HasPrefix(ref, memstore.StoreIDPrefix) {
		return ref, nil
	}
	var live, old []string // the IDs of the live and archived stores named ref
	if c.caller != nil && c.caller.Session != nil {
		// A session may not list stores: it sees its own.
		for _, a := range c.caller.Session.Attachments {
			if a.Name == ref {
				live = append(live, a.StoreID)
			}
		}
	} else {
		for f := (memstore.StoreFilter{IncludeArchived: true, Limit: memstore.MaxPageSize}); ; {
			page, err := c.Stores(ctx, c.caller, f)
			if err != nil {
				return "", err
			}
			for _, s := range page.Items {
				switch {
				case s.Name != ref:
				case s.ArchivedAt == nil:
					live = append(live, s.ID)
				default:
					old = append(old, s.ID)
				}
			}
			if f.Page = page.Next; f.Page == "" {
				break
			}
		}
	}
	switch {
	case len(live) == 1:
		return live[0], nil
	case len(live) > 1:
		return "", memstore.Errorf(memstore.EInvalid, "%d memory stores are named %q: %s; give one by its ID", len(live), cell(ref), strings.Join(live, ", "))
	case len(old) == 0 && c.caller != nil && c.caller.Session != nil:
		return "", memstore.Errorf(memstore.ENotFound, "session %s has no memory store named %q; 'memstore sessions show %s' lists its stores", c.caller.Session.ID, cell(ref), c.caller.Session.ID)
	case len(old) == 0:
		return "", memstore.Errorf(memstore.ENotFound, "no memory store named %q; 'memstore stores ls' lists them (give a store by its name or ID)", cell(ref))
	case !archived:
		return "", memstore.Errorf(memstore.EConflict, "the memory store named %q is archived (%s): it can no longer be written or attached; 'memstore stores ls' lists the live ones", cell(ref), strings.Join(old, ", "))
	case len(old) > 1:
		return "", memstore.Errorf(memstore.EInvalid, "%d archived memory stores are named %q: %s; give one by its ID", len(old), cell(ref), strings.Join(old, ", "))
	}
	return old[0], nil
}

// resolveAttachments resolves the store of each attachment, in place:
// attachments are made to live stores only.
func (c *conn) resolveAttachments(ctx context.Context, att []memstore.AttachmentCreate) error {
	for i := range att {
		id, err := c.resolveStore(ctx, att[i].StoreID, false)
		if err != nil {
			return err
		}
		att[i].StoreID = id
	}
	return nil
}
