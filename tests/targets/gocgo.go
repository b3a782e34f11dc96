// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// gocgo.go: a known Go call chain into C through cgo (main.main -> main.goLevel1 -> main.goCall
// -> C c_entry -> c_level1 -> c_leaf_spin), for tests/integration/run-go.sh: the C frames unwind
// by their CFI (.eh_frame, kept by -ldflags='-s -w'), the Go frames by .gopclntab, across
// runtime.asmcgocall's switch from the goroutine stack to the thread's own. Runs for the
// seconds given (default 2).
package main

/*
#include <stdint.h>

__attribute__((noinline)) uint64_t c_leaf_spin(uint64_t n)
{
	uint64_t x = 0;
	for (uint64_t i = 0; i < n; i++)
		x += i * i;
	__asm__ volatile("" : "+r"(x));
	return x;
}

__attribute__((noinline)) uint64_t c_level1(uint64_t n)
{
	return c_leaf_spin(n) + 1;
}

uint64_t c_entry(uint64_t n)
{
	return c_level1(n) * 3;
}
*/
import "C"

import (
	"os"
	"strconv"
	"time"
)

//go:noinline
func goCall(n int) uint64 { return uint64(C.c_entry(C.uint64_t(n))) }

//go:noinline
func goLevel1(n int) uint64 { return goCall(n) + 1 }

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		goLevel1(2000000)
	}
}
