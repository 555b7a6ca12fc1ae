// Command clientgo is the Go side of Reconcile Lab's benchmarks: client-go's own
// dynamic shared informer and work queue, run by bench/informer.ts and
// bench/queue.ts in a fresh process per measurement, so that their numbers sit
// next to ours from one run.
//
// Subcommands (each prints one line "RESULT <json>" on stdout, logs on stderr):
//
//	informer --kubeconfig F --namespace NS --group G --version V --resource R --expect N [--drop-managed-fields]
//	queue    [--keys 10000 --workers 4 --batch 100 --rounds 10 --trials 7]
//
// The module pins client-go to the Kubernetes version of the local control
// plane (controlplane/go.mod), so it builds from the module cache that the
// control plane's build filled.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: clientgo informer|queue [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "informer":
		err = runInformer(os.Args[2:])
	case "queue":
		err = runQueue(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientgo:", err)
		os.Exit(1)
	}
}
