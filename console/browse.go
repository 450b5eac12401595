package console

import (
	"context"
	"strings"

	"github.com/memstore/memstore"
)

// The tree of a store beside the memory being read: the directories
// from the store's root down to the memory's, each open and listing its
// first entries, the others closed links to their own listing. Each
// level is one read of a page of a directory, so a memory's page costs
// as many reads as its path has directories, at most treeLevels.

// treeLevels is how many directories above a memory its tree shows:
// deeper paths start the tree that many levels up.
const treeLevels = 8

// treeEntries is how many entries of each directory the tree lists; a
// directory with more links to its listing.
const treeEntries = 50

// A treeNode is a directory or a memory of the tree.
type treeNode struct {
	Name     string
	Prefix   string           // a directory's, ending with "/"
	Memory   *memstore.Memory // a memory's
	Open     bool             // a directory on the path to the memory shown
	Current  bool             // the memory shown
	Children []*treeNode
	More     bool // a directory with more entries than listed
}

// storeTree is the tree of store storeID down to the memory m.
func (h *Handler) storeTree(ctx context.Context, s *signedIn, storeID string, m *memstore.Memory) (*treeNode, error) {
	dirs := []string{"/"}
	for _, c := range crumbs(dirOf(m.Path))[1:] {
		dirs = append(dirs, c.Prefix)
	}
	if len(dirs) > treeLevels {
		dirs = dirs[len(dirs)-treeLevels:]
	}
	root := &treeNode{Name: dirs[0], Prefix: dirs[0], Open: true}
	node := root
	for i, dir := range dirs {
		p, err := h.cfg.Memories.Memories(ctx, s.caller, storeID, memstore.MemoryFilter{PathPrefix: dir, Depth: 1, Limit: treeEntries})
		if err != nil {
			return nil, err
		}
		node.More = p.Next != ""
		var next *treeNode
		found := false
		for _, it := range p.Items {
			c := &treeNode{Prefix: it.Prefix, Memory: it.Memory}
			if it.Memory != nil {
				c.Name = baseName(it.Memory.Path)
				c.Current = it.Memory.ID == m.ID
				found = found || c.Current
			} else {
				c.Name = baseName(it.Prefix) + "/"
				if i+1 < len(dirs) && it.Prefix == dirs[i+1] {
					c.Open, next = true, c
				}
			}
			node.Children = append(node.Children, c)
		}
		if next == nil && i+1 < len(dirs) {
			// The way down is past the first entries: shown after them.
			next = &treeNode{Name: baseName(dirs[i+1]) + "/", Prefix: dirs[i+1], Open: true}
			node.Children = append(node.Children, next)
		}
		if i == len(dirs)-1 && !found {
			node.Children = append(node.Children, &treeNode{Name: baseName(m.Path), Memory: m, Current: true})
		}
		node = next
	}
	return root, nil
}

// baseName is the last segment of a path or prefix ("/a/b/" → "b").
func baseName(p string) string {
	p = strings.TrimSuffix(p, "/")
	return p[strings.LastIndex(p, "/")+1:]
}
