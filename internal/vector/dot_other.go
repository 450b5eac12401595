//go:build !amd64 && !arm64

package vector

// kernels lists this CPU's kernels, the fastest first.
func kernels() []kernel {
	return []kernel{{"go", dotsGo}}
}
