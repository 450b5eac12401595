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

// dotsWide runs dotsAVX2 over the blocks of 16 of each vector and adds
// the remainder's products in Go.
func dotsWide(q, data []byte, dims int, out []int32) {
	n := len(out)
	body := dims &^ 15
	if n == 0 || body == 0 {
		dotsGo(q, data, dims, out)
		return
	}
	_ = data[n*dims-1]
	wide := make([]int16, body)
	for i := range wide {
		wide[i] = int16(int8(q[i]))
	}
	dotsAVX2(&wide[0], &data[0], dims, body, n, &out[0])
	if body < dims {
		for i := range out {
			out[i] += dot(q[body:], data[i*dims+body:(i+1)*dims])
		}
	}
}
