package main

import (
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
)

// profileEnv names a file to write a CPU profile of the whole run to, "%p" standing
// for the process id. It is for developers: zkbench's children inherit it, so every
// member of a benchmarked cluster writes its own profile.
const profileEnv = "ZKRAFT_CPUPROFILE"

// startProfile starts the CPU profile $ZKRAFT_CPUPROFILE asks for and returns what ends
// it; without the variable it does nothing.
func startProfile(getenv func(string) string, log *slog.Logger) (stop func()) {
	path := getenv(profileEnv)
	if path == "" {
		return func() {}
	}
	path = strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid()))
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		log.Warn("cpu profile not written", "file", path, "err", err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	log.Info("writing a cpu profile", "file", path)
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
