package vector

import (
	"math/rand/v2"
	"testing"
)

// Every dot-product kernel of this machine (the pure-Go one everywhere,
// an assembly one where the CPU has it) computes exactly the dot products
// of the reference, for every length (with and without a remainder past
// the assembly's blocks of 16), the extremes of int8 included.
func TestKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	ks := kernels()
	if len(ks) == 0 {
		t.Fatal("no kernel")
	}
	t.Logf("kernels: %v", kernelNames(ks))
	for _, dims := range []int{1, 3, 15, 16, 17, 31, 32, 33, 48, 100, 256, 300, 384, 768, 1536, 4096} {
		for _, n := range []int{0, 1, 7, 64} {
			q := make([]byte, dims)
			data := make([]byte, n*dims)
			fill := func(b []byte, mode int) {
				for i := range b {
					switch mode {
					case 0:
						b[i] = byte(int8(r.IntN(255) - 127))
					case 1:
						b[i] = 127
					default:
						b[i] = 0x81 // -127
					}
				}
			}
			for mode := range 3 {
				fill(q, mode%2)
				fill(data, mode)
				want := make([]int32, n)
				for i := range want {
					var s int64
					for j := range dims {
						s += int64(int8(q[j])) * int64(int8(data[i*dims+j]))
					}
					want[i] = int32(s)
				}
				for _, k := range ks {
					got := make([]int32, n)
					k.fn(q, data, dims, got)
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("kernel %s, %d dims, vector %d of %d, mode %d: %d, want %d", k.name, dims, i, n, mode, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

func kernelNames(ks []kernel) []string {
	var names []string
	for _, k := range ks {
		names = append(names, k.name)
	}
	return names
}
