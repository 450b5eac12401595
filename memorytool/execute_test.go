package memorytool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memstore/memstore/memorytool"
)

// failing is a Handler whose every command fails with err.
type failing struct{ err error }

func (f failing) View(context.Context, string, []int) (string, error)    { return "", f.err }
func (f failing) Create(context.Context, string, string) (string, error) { return "", f.err }
func (f failing) StrReplace(context.Context, string, string, string) (string, error) {
	return "", f.err
}
func (f failing) Insert(context.Context, string, int, string) (string, error) { return "", f.err }
func (f failing) Delete(context.Context, string) (string, error)              { return "", f.err }
func (f failing) Rename(context.Context, string, string) (string, error)      { return "", f.err }

// TestExecuteHidesOtherErrors: a handler's *Error reaches the model as it
// is; any other error, which may name host paths, does not.
func TestExecuteHidesOtherErrors(t *testing.T) {
	input := []byte(`{"command":"view","path":"/memories"}`)
	r := memorytool.Execute(t.Context(), failing{&memorytool.Error{Message: "for the model"}}, input)
	if r.Content != "Error: for the model" || !r.IsError {
		t.Errorf("an *Error: %+v", r)
	}
	r = memorytool.Execute(t.Context(), failing{errors.New("open /home/alice/.secret/db: permission denied")}, input)
	if !r.IsError || strings.Contains(r.Content, "/home/alice") || !strings.HasPrefix(r.Content, "Error: ") {
		t.Errorf("another error: %+v", r)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r = memorytool.Execute(ctx, failing{errors.New("x")}, input)
	if !r.IsError || !strings.Contains(r.Content, "cancelled") {
		t.Errorf("cancelled: %+v", r)
	}
}
