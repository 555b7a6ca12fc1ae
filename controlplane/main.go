// Command kube-testenv is a multicall binary holding the control-plane
// components Reconcile Lab needs for its local cluster: etcd, kube-apiserver
// and kube-controller-manager, plus kubectl for the lab and the exec
// reconciler examples. Each component still runs as its own process
// (argv[1] picks which), so feature gates, metrics registries and klog flags
// are never shared between them; one binary just means one compile and one
// link instead of three.
package main

import (
	"fmt"
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kube-testenv etcd|kube-apiserver|kube-controller-manager|kubectl [flags]")
		os.Exit(2)
	}
	// Shift argv so each component sees itself as argv[0].
	os.Args = os.Args[1:]
	switch os.Args[0] {
	case "etcd":
		etcdmain.Main(os.Args)
	case "kube-apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(kcm.NewControllerManagerCommand()))
	case "kubectl":
		if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
	default:
		fmt.Fprintf(os.Stderr, "kube-testenv: unknown component %q\n", os.Args[0])
		os.Exit(2)
	}
}
