package bundletest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchLayer is the layer size of each of a benchmark bundle's two
// artifacts.
const BenchLayer = 32 << 20

// Beside is a cp of a bundle's tar (on the same disk, page cache warm as
// for the rest), timed apart from b's timer, beside each iteration of a
// benchmark: the machine's load changes less between the two than between
// benchmarks.
type Beside struct {
	src, dst string
	cp, op   time.Duration
}

// NewBeside sets b's bytes to the tar's size and resets its timer.
func NewBeside(b *testing.B, tarPath string) *Beside {
	info, err := os.Stat(tarPath)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(info.Size())
	b.ResetTimer()
	return &Beside{src: tarPath, dst: filepath.Join(b.TempDir(), "copy.tar")}
}

// Time runs op timed, then a cp untimed by b.
func (c *Beside) Time(b *testing.B, op func()) {
	start := time.Now()
	op()
	c.op += time.Since(start)
	b.StopTimer()
	start = time.Now()
	c.Copy(b)
	c.cp += time.Since(start)
	b.StartTimer()
}

// Copy copies the tar with cp, then removes the copy untimed.
func (c *Beside) Copy(b *testing.B) {
	if out, err := exec.Command("cp", c.src, c.dst).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v %s", err, out)
	}
	b.StopTimer()
	os.Remove(c.dst)
	b.StartTimer()
}

// Report reports x-cp: cp's time over the operation's, so 0.5 is half
// cp's speed.
func (c *Beside) Report(b *testing.B) {
	b.ReportMetric(float64(c.cp)/float64(c.op), "x-cp")
}
