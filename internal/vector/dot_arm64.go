package vector

// kernels lists this CPU's kernels, the fastest first. Every arm64 CPU
// has NEON (Advanced SIMD).
func kernels() []kernel {
	return []kernel{{"neon", dotsNarrow}, {"go", dotsGo}}
}

// dotsNEON writes to out[i] the dot product of the body bytes of vector
// i of data (each stride bytes from the last) with q; body is a positive
// multiple of 16 (dot_arm64.s).
//
//go:noescape
func dotsNEON(q, data *byte, stride, body, n int, out *int32)

// dotsNarrow runs dotsNEON.
func dotsNarrow(q, data []byte, dims int, out []int32) {
	inBlocks(q, data, dims, out, func(body int) {
		dotsNEON(&q[0], &data[0], dims, body, len(out), &out[0])
	})
}
