package console

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// safeSchemes are the only URL schemes a rendered link or image may
// have; a URL without a scheme (relative) is allowed too.
var safeSchemes = map[string]bool{"http": true, "https": true, "mailto": true}

// md renders memories' Markdown: CommonMark with GitHub's tables,
// strikethrough and autolinks, never with raw HTML (goldmark without
// html.WithUnsafe escapes it), and with every link and image passed
// through neutralise.
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(neutralise{}, 100))),
)

// renderMarkdown returns content as safe HTML. Should rendering fail, the
// content is shown as escaped text.
func renderMarkdown(content string) template.HTML {
	var b bytes.Buffer
	if err := md.Convert([]byte(content), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(content) + "</pre>")
	}
	return template.HTML(b.String()) // escaped by goldmark, links checked by neutralise
}

// safeURL reports whether dest may be a link or image target: relative,
// or of one of safeSchemes. Anything that does not parse is refused, so
// that a browser's more lenient reading cannot find a scheme in it.
func safeURL(dest string) bool {
	u, err := url.Parse(strings.TrimSpace(dest))
	return err == nil && (u.Scheme == "" || safeSchemes[strings.ToLower(u.Scheme)])
}

// neutralise is the AST transformer that makes links safe: a link or
// image with an unsafe URL loses it (an image becomes its text), an
// autolink with one becomes plain text, and every link gets
// rel="noopener noreferrer" and opens without access to this page.
type neutralise struct{}

// linkRel is every rendered link's rel.
var linkRel = []byte("noopener noreferrer")

func (neutralise) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var replace [][2]ast.Node
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			if !safeURL(string(n.Destination)) {
				n.Destination = nil
			}
			n.SetAttributeString("rel", linkRel)
		case *ast.Image:
			if !safeURL(string(n.Destination)) {
				replace = append(replace, [2]ast.Node{n, ast.NewString(plainText(n, src))})
			}
		case *ast.AutoLink:
			if !safeURL(string(n.URL(src))) {
				replace = append(replace, [2]ast.Node{n, ast.NewString(n.Label(src))})
			}
			n.SetAttributeString("rel", linkRel)
		}
		return ast.WalkContinue, nil
	})
	for _, r := range replace {
		r[0].Parent().ReplaceChild(r[0].Parent(), r[0], r[1])
	}
}

// plainText is the text of n's inline children.
func plainText(n ast.Node, src []byte) []byte {
	var b bytes.Buffer
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(src))
		} else {
			b.Write(plainText(c, src))
		}
	}
	return b.Bytes()
}
