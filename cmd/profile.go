package cmd

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole process to the file that
// WASEND_CPUPROFILE names, for measuring a real run (bench/throughput.sh
// PROFILE=1); unset, it does nothing. The returned function stops the
// profile and closes the file.
func startProfile(errOut io.Writer) func() {
	path := os.Getenv("WASEND_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(errOut, "warning: WASEND_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(errOut, "warning: WASEND_CPUPROFILE %s: %v\n", path, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(errOut, "warning: WASEND_CPUPROFILE %s: %v\n", path, err)
		}
	}
}
