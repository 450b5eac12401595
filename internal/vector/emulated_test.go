//go:build amd64

package vector

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNEONUnderEmulation holds the arm64 kernel to the pure-Go one on an
// amd64 machine: it builds this package's tests for arm64 and runs
// TestKernelsAgree under qemu's user-mode emulator, which must report
// the NEON kernel among those it compared.
func TestNEONUnderEmulation(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no qemu-aarch64-static on PATH, and CI must test the arm64 kernel: .ci/run installs Debian's qemu-user-static")
		}
		t.Skip("no qemu-aarch64-static on PATH: the arm64 kernel's test needs it (apt-get install qemu-user-static)")
	}
	bin := filepath.Join(t.TempDir(), "vector.test")
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the tests for arm64: %v\n%s", err, out)
	}
	out, err := exec.Command(qemu, bin, "-test.run", "^TestKernelsAgree$", "-test.v").CombinedOutput()
	if err != nil {
		t.Fatalf("TestKernelsAgree on arm64: %v\n%s", err, out)
	}
	if s := string(out); !strings.Contains(s, "kernels: [neon") || !strings.Contains(s, "--- PASS: TestKernelsAgree") {
		t.Errorf("TestKernelsAgree on arm64 did not compare the NEON kernel:\n%s", s)
	}
}
