package batch

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
)

// Safely runs fn, one request of a batch that others share, and turns a
// panic into fn's error, logged with its stack on log: a fault in one
// request must fail that request alone, not the batch or the process
// that runs it. A runtime error's message names only code; of any other
// panic only its type is told, since its value might carry what was
// written, which logs never hold.
func Safely(ctx context.Context, log *slog.Logger, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			what := fmt.Sprintf("a panic of type %T", p)
			if re, ok := p.(runtime.Error); ok {
				what = re.Error()
			}
			log.LogAttrs(ctx, slog.LevelError, "a write failed with a panic; it was rolled back", slog.String("panic", what), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("the write failed inside the server: %s", what)
		}
	}()
	return fn()
}
