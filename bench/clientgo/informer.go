package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// informerResult is what bench/informer.ts reads: the initial sync time (from
// Start until the handler received the N-th add) and the live heap growth per
// cached object after a full GC.
type informerResult struct {
	SyncMs        float64 `json:"syncMs"`
	HeapPerObject float64 `json:"heapPerObject"`
	Objects       int     `json:"objects"`
}

// ownerUIDIndex files an object under the UID of each owner reference, like
// src/core/cache/indexFuncs.ts ownerUidIndexFunc.
func ownerUIDIndex(obj any) ([]string, error) {
	m, err := metaOf(obj)
	if err != nil {
		return nil, err
	}
	refs := m.GetOwnerReferences()
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if r.UID != "" {
			out = append(out, string(r.UID))
		}
	}
	return out, nil
}

// appLabelIndex files an object under its "app" label, like labelIndexFunc("app").
func appLabelIndex(obj any) ([]string, error) {
	m, err := metaOf(obj)
	if err != nil {
		return nil, err
	}
	if v, ok := m.GetLabels()["app"]; ok {
		return []string{v}, nil
	}
	return nil, nil
}

func metaOf(obj any) (metav1.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T", obj)
	}
	return u, nil
}

// stripManagedFields is the opt-in transform, as src/core/cache/sharedIndexInformer.ts stripManagedFields.
func stripManagedFields(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
	return obj, nil
}

func heapAlloc() uint64 {
	var ms runtime.MemStats
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// runInformer syncs one dynamic shared informer (the namespace index plus the
// same two indexers as ours) and reports its time and heap per object.
func runInformer(args []string) error {
	fs := flag.NewFlagSet("informer", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig path")
	ns := fs.String("namespace", "", "namespace")
	group := fs.String("group", "", "API group")
	version := fs.String("version", "v1", "API version")
	resource := fs.String("resource", "", "resource (plural)")
	expect := fs.Int("expect", 0, "number of objects to wait for")
	drop := fs.Bool("drop-managed-fields", false, "strip metadata.managedFields in a transform")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *expect <= 0 || *resource == "" {
		return fmt.Errorf("--expect and --resource are required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	// No client-side throttling: a reflector sends one request per page anyway.
	cfg.QPS = -1
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: *group, Version: *version, Resource: *resource}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Warm up the HTTP/TLS machinery so that its one-time allocations are not counted (as the Node side does).
	if _, err := client.Resource(gvr).Namespace(*ns).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("warm-up list: %w", err)
	}
	base := heapAlloc()

	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, *ns, nil)
	inf := factory.ForResource(gvr).Informer()
	if err := inf.AddIndexers(cache.Indexers{"ownerUid": ownerUIDIndex, "label:app": appLabelIndex}); err != nil {
		return err
	}
	if *drop {
		if err := inf.SetTransform(stripManagedFields); err != nil {
			return err
		}
	}
	var adds atomic.Int64
	all := make(chan struct{})
	n := int64(*expect)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) {
			if adds.Add(1) == n {
				close(all)
			}
		},
	}); err != nil {
		return err
	}
	t0 := time.Now()
	factory.Start(ctx.Done())
	select {
	case <-all:
	case <-time.After(10 * time.Minute):
		return fmt.Errorf("timed out after %d of %d adds", adds.Load(), n)
	}
	syncMs := float64(time.Since(t0).Microseconds()) / 1000
	cached := len(inf.GetStore().ListKeys())
	heap := heapAlloc()
	runtime.KeepAlive(inf)
	fmt.Fprintf(os.Stderr, "clientgo informer: %d objects in %.0f ms\n", cached, syncMs)
	return printResult(informerResult{SyncMs: syncMs, HeapPerObject: float64(int64(heap)-int64(base)) / float64(cached), Objects: cached})
}
