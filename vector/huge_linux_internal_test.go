package vector

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestAdviseHuge maps fresh memory, advises it and touches it: where the
// kernel offers transparent huge pages on advice, the mapping must then
// hold some.
func TestAdviseHuge(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skip("no transparent huge pages here")
	}
	const size = 16 << 20
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	p := unsafe.Pointer(unsafe.SliceData(mem))
	adviseHuge(p, size)
	for i := 0; i < size; i += 4096 {
		mem[i] = 1
	}
	kb, err := anonHugeKB(uintptr(p))
	if err != nil {
		t.Fatal(err)
	}
	if kb == 0 {
		t.Errorf("no huge pages in an advised mapping (THP mode %q)", strings.TrimSpace(string(mode)))
	}
}

// anonHugeKB returns the AnonHugePages of the mapping holding address a.
func anonHugeKB(a uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= a && a < hi
			continue
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			return strconv.Atoi(strings.Fields(line)[1])
		}
	}
	return 0, fmt.Errorf("no mapping holds %#x", a)
}
