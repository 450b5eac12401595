package vector

// The scan's kernel: the dot products of a query blob with n blobs laid
// end to end. Where the CPU has vector instructions (dot_amd64.s: AVX2;
// dot_arm64.s: NEON) an assembly kernel computes them over each vector's
// blocks of 16 bytes; everywhere else the pure-Go one.
// TestKernelsAgree proves they agree.

// A kernel writes the dot product of q with each of the len(out) blobs of
// data, of len(q) bytes each, to out.
type kernel struct {
	name string
	fn   func(q, data []byte, dims int, out []int32)
}

// dots is the fastest kernel of this CPU (dot_amd64.go, dot_other.go).
var dots = kernels()[0].fn

// inBlocks runs asm, an assembly kernel of the blocks of 16 bytes, over
// the first body bytes of each vector (dims rounded down to 16), and adds
// the remainder's products in Go.
func inBlocks(q, data []byte, dims int, out []int32, asm func(body int)) {
	body := dims &^ 15
	if len(out) == 0 || body == 0 {
		dotsGo(q, data, dims, out)
		return
	}
	_ = data[len(out)*dims-1]
	asm(body)
	if body < dims {
		for i := range out {
			out[i] += dot(q[body:], data[i*dims+body:(i+1)*dims])
		}
	}
}

// dotsGo is the pure-Go kernel.
func dotsGo(q, data []byte, dims int, out []int32) {
	for i := range out {
		out[i] = dot(q, data[i*dims:(i+1)*dims])
	}
}

func dot(a, b []byte) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(int8(a[i])) * int32(int8(b[i]))
		s1 += int32(int8(a[i+1])) * int32(int8(b[i+1]))
		s2 += int32(int8(a[i+2])) * int32(int8(b[i+2]))
		s3 += int32(int8(a[i+3])) * int32(int8(b[i+3]))
	}
	for ; i < len(a); i++ {
		s0 += int32(int8(a[i])) * int32(int8(b[i]))
	}
	return s0 + s1 + s2 + s3
}
