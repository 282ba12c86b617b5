package main

import (
	"fmt"
	"syscall"
	"time"
)

// warmUp is run (and thrown away) before every timed loop, so lazy
// initialisation, the first GC cycles and cold caches are not measured.
const warmUp = 200 * time.Millisecond

// loop runs op in batches of `batch` until `seconds` have passed, reading
// the clock once per batch, and returns the ops done and the time taken.
func loop(seconds float64, batch int, op func() error) (int, float64, error) {
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	ops := 0
	for {
		for i := 0; i < batch; i++ {
			if err := op(); err != nil {
				return ops, 0, err
			}
		}
		ops += batch
		if now := time.Now(); !now.Before(deadline) {
			return ops, now.Sub(start).Seconds(), nil
		}
	}
}

// measure warms up, then times op, and prints the result line.
func measure(seconds float64, batch int, op func() error) error {
	if _, _, err := loop(warmUp.Seconds(), batch, op); err != nil {
		return err
	}
	cpu := processCPUSeconds()
	ops, elapsed, err := loop(seconds, batch, op)
	if err != nil {
		return err
	}
	report(ops, elapsed, processCPUSeconds()-cpu)
	return nil
}

// processCPUSeconds is the process's user plus system time so far, every
// thread (getrusage), as AuthKit's side and libcurl's measure theirs.
func processCPUSeconds() float64 {
	var usage syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) != nil {
		return 0
	}
	return float64(usage.Utime.Nano()+usage.Stime.Nano()) / 1e9
}

// report prints the one line on stdout the orchestrator reads, with the
// CPU time the timed loop took.
func report(ops int, seconds float64, cpuSeconds float64) {
	fmt.Printf("{\"ops\": %d, \"seconds\": %.6f, \"cpu_seconds\": %.6f}\n", ops, seconds, cpuSeconds)
}
