//go:build !linux

package vector

import "unsafe"

// adviseHuge does nothing here: huge-page advice is Linux's.
func adviseHuge(unsafe.Pointer, uintptr) {}
