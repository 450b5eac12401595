package vector

import "golang.org/x/sys/cpu"

// kernels lists this CPU's kernels, the fastest first.
func kernels() []kernel {
	ks := []kernel{{"go", dotsGo}}
	if cpu.X86.HasAVX2 {
		ks = append([]kernel{{"avx2", dotsWide}}, ks...)
	}
	return ks
}

// dotsAVX2 writes to out[i] the dot product of the body bytes of vector
// i of data (each stride bytes from the last) with q, the query widened
// to int16; body is a positive multiple of 16 (dot_amd64.s).
//
//go:noescape
func dotsAVX2(q *int16, data *byte, stride, body, n int, out *int32)

// dotsWide runs dotsAVX2 with the query widened to int16.
func dotsWide(q, data []byte, dims int, out []int32) {
	inBlocks(q, data, dims, out, func(body int) {
		var buf [1024]int16
		wide := buf[:0]
		if body > len(buf) {
			wide = make([]int16, 0, body)
		}
		for _, x := range q[:body] {
			wide = append(wide, int16(int8(x)))
		}
		dotsAVX2(&wide[0], &data[0], dims, body, len(out), &out[0])
	})
}
