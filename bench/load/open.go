package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// p99Target is the latency the open loop's verdict holds each operation's
// 99th percentile to.
const p99Target = 100 * time.Millisecond

// parseRates reads --rates: positive requests-a-second figures separated
// by commas, in the order to run them. It fails naming the first figure
// that is not one.
func parseRates(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var rates []float64
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("%q is not a positive number of requests a second", f)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// runOpen runs the open loop at each rate in turn for d, prints each
// step's figures and, at the end, the highest rate whose every operation
// kept its p99 under p99Target with no error; then it reads back every
// episode acknowledged in any step. It fails when any step had an error
// or a write was lost.
func runOpen(hc *http.Client, base string, keys []*result, rates []float64, d time.Duration, addShare float64, pid int) error {
	var all []*result
	errs, best := 0, 0.0
	for _, rate := range rates {
		step := freshResults(keys)
		fmt.Printf("--- %.0f requests/s for %v\n", rate, d)
		cpu0 := procCPU(pid)
		elapsed, late := openLoop(hc, base, step, rate, d, addShare)
		p99, n := summarize(step, elapsed, procCPU(pid)-cpu0)
		if late > 0 {
			fmt.Printf("the sender fell behind its schedule by up to %v (counted in the latencies)\n", late.Round(time.Millisecond))
		}
		if n == 0 && p99 < p99Target {
			best = max(best, rate)
		}
		errs += n
		all = append(all, step...)
	}
	if best > 0 {
		fmt.Printf("highest rate with every p99 under %v and no error: %.0f requests/s\n", p99Target, best)
	} else {
		fmt.Printf("no rate kept every p99 under %v with no error\n", p99Target)
	}
	return verdict(errs, verify(hc, base, all))
}

// freshResults returns empty results for the clients of keys, with their
// users and keys, so each step's figures are its own.
func freshResults(keys []*result) []*result {
	out := make([]*result, len(keys))
	for i, k := range keys {
		out[i] = &result{lat: map[string][]time.Duration{}, user: k.user, secret: k.secret}
	}
	return out
}

// openLoop sends requests at Poisson arrivals of the given rate for d,
// each on its own goroutine without waiting for earlier answers, taking
// the clients' keys in turn. A request's latency counts from its
// scheduled arrival, so a sender that falls behind (or a server that
// makes it) is not hidden. It returns the time until the last answer and
// how far behind schedule the sender fell at worst.
func openLoop(hc *http.Client, base string, res []*result, rate float64, d time.Duration, addShare float64) (elapsed, late time.Duration) {
	rng := rand.New(rand.NewPCG(uint64(rate*1000), 11))
	var wg sync.WaitGroup
	start := time.Now()
	at := start
	for n := 0; ; n++ {
		at = at.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
		if at.Sub(start) >= d {
			break
		}
		if wait := time.Until(at); wait > 0 {
			time.Sleep(wait)
		} else {
			late = max(late, -wait)
		}
		r, reqRng, sched := res[n%len(res)], rand.New(rand.NewPCG(uint64(n), 13)), at
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, id, err := one(hc, base, r, reqRng, n, addShare)
			r.record(op, id, time.Since(sched), err)
		}()
	}
	wg.Wait()
	return time.Since(start), late
}
