package main

import (
	"flag"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// benchQueue is the part of a work queue the loop uses.
type benchQueue interface {
	Add(string)
	Get() (string, bool)
	Done(string)
	ShutDown()
}

// fifo is the Go baseline: a slice FIFO with a set for de-duplication under one
// mutex and condition variable, and none of a work queue's guarantees (no
// processing set, no re-add-while-processing rule).
type fifo struct {
	mu       sync.Mutex
	cond     *sync.Cond
	items    []string
	pending  map[string]struct{}
	shutdown bool
}

func newFifo() *fifo {
	f := &fifo{pending: map[string]struct{}{}}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *fifo) Add(k string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	if _, ok := f.pending[k]; ok {
		return
	}
	f.pending[k] = struct{}{}
	f.items = append(f.items, k)
	f.cond.Signal()
}

func (f *fifo) Get() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.items) == 0 && !f.shutdown {
		f.cond.Wait()
	}
	if len(f.items) == 0 {
		return "", true
	}
	k := f.items[0]
	f.items = f.items[1:]
	delete(f.pending, k)
	return k, false
}

func (f *fifo) Done(string) {}

func (f *fifo) ShutDown() {
	f.mu.Lock()
	f.shutdown = true
	f.mu.Unlock()
	f.cond.Broadcast()
}

// queueImpl is one contender of the queue benchmark.
type queueImpl struct {
	Name string
	make func() benchQueue
}

type queueRow struct {
	Name            string  `json:"name"`
	CyclesPerSec    float64 `json:"cyclesPerSec"`
	MinCyclesPerSec float64 `json:"min"`
	MaxCyclesPerSec float64 `json:"max"`
}

type queueResult struct {
	Gomaxprocs int        `json:"gomaxprocs"`
	GoVersion  string     `json:"goVersion"`
	Rows       []queueRow `json:"rows"`
}

// round is bench/queue.ts's round: workers block in Get; a producer adds the keys in
// batches (yielding between batches); each worker calls Done per item; once every
// key was processed the queue shuts down and the workers exit.
func round(q benchQueue, keys []string, workers, batch int) int {
	var processed atomic.Int64
	all := make(chan struct{})
	total := int64(len(keys))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(k)
				if processed.Add(1) == total {
					close(all)
				}
			}
		}()
	}
	for i := 0; i < len(keys); i += batch {
		for j := i; j < i+batch && j < len(keys); j++ {
			q.Add(keys[j])
		}
		runtime.Gosched()
	}
	<-all
	q.ShutDown()
	wg.Wait()
	return int(processed.Load())
}

func runQueue(args []string) error {
	fs := flag.NewFlagSet("queue", flag.ContinueOnError)
	nKeys := fs.Int("keys", 10000, "distinct keys")
	workers := fs.Int("workers", 4, "workers")
	batch := fs.Int("batch", 100, "adds between yields")
	rounds := fs.Int("rounds", 10, "rounds per trial")
	trials := fs.Int("trials", 7, "trials (after one warm-up)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	keys := make([]string, *nKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("namespace-%d/object-%d", i%50, i)
	}
	impls := []queueImpl{
		{"baseline (slice FIFO + set, one mutex)", func() benchQueue { return newFifo() }},
		{"workqueue.Typed (dirty + processing sets)", func() benchQueue { return workqueue.NewTyped[string]() }},
		{"rate-limiting queue (DefaultTypedControllerRateLimiter)", func() benchQueue {
			return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
		}},
	}
	trial := func(impl queueImpl) (float64, error) {
		t0 := time.Now()
		cycles := 0
		for r := 0; r < *rounds; r++ {
			cycles += round(impl.make(), keys, *workers, *batch)
		}
		if cycles != *rounds**nKeys {
			return 0, fmt.Errorf("%s: processed %d of %d keys", impl.Name, cycles, *rounds**nKeys)
		}
		return float64(cycles) / time.Since(t0).Seconds(), nil
	}
	samples := make([][]float64, len(impls))
	for _, impl := range impls {
		if _, err := trial(impl); err != nil {
			return err
		}
	}
	for t := 0; t < *trials; t++ {
		for i, impl := range impls {
			v, err := trial(impl)
			if err != nil {
				return err
			}
			samples[i] = append(samples[i], v)
		}
	}
	res := queueResult{Gomaxprocs: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	for i, impl := range impls {
		xs := append([]float64(nil), samples[i]...)
		sort.Float64s(xs)
		res.Rows = append(res.Rows, queueRow{Name: impl.Name, CyclesPerSec: xs[len(xs)/2], MinCyclesPerSec: xs[0], MaxCyclesPerSec: xs[len(xs)-1]})
	}
	return printResult(res)
}
