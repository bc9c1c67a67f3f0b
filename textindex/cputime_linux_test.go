package textindex_test

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time the calling thread has used
// (CLOCK_THREAD_CPUTIME_ID), which a loaded machine's other processes do
// not inflate as they do wall time; lockThread keeps the goroutine on one
// thread so that differences of it mean something.
func threadCPU() time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

const cpuClock = "cpu"
