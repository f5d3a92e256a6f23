// cr-cache: controller-runtime's cache (what a manager's GetInformer and List read from) as
// kinformer's peer in tests and benchmarks. It gets the informer for RESOURCE from a cache.Cache,
// prints each handler event as kinformer-watch prints its deltas (internal/deltas), then
// {"type":"SYNCED"} once the cache has synced; it runs until SIGTERM or SIGINT.
//
//	cr-cache [-s URL [--token T] | --kubeconfig F] [-n NS] [-l SEL] [--field-selector F]
//	         [--protobuf] [--watch-list=true|false] [--metadata-only] [--drop-managed-fields]
//	         RESOURCE
package main

import (
	"context"
	"os/signal"
	"syscall"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kinformer/tests/kube/internal/deltas"
	"kinformer/tests/kube/internal/peer"
)

const name = "cr-cache"

func main() {
	flags, cfg, mapping := peer.Start(name, "controller-runtime's cache, printing kinformer-watch's delta lines")
	c, err := newCache(flags, cfg)
	if err != nil {
		peer.Fail(name, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	obj := object(flags, mapping)
	informer, err := c.GetInformer(ctx, obj)
	if err != nil {
		peer.Fail(name, err)
	}
	out := deltas.NewPrinter()
	if _, err := informer.AddEventHandler(out.Handler()); err != nil {
		peer.Fail(name, err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			peer.Fail(name, err)
		}
	}()
	if c.WaitForCacheSync(ctx) {
		out.Synced()
	}
	<-ctx.Done()
	out.Flush()
}

// newCache is a cache as a manager makes it, with the flags' selectors and transform.
func newCache(f *peer.Flags, cfg *rest.Config) (cache.Cache, error) {
	opts := cache.Options{Scheme: runtime.NewScheme()}
	if err := scheme.AddToScheme(opts.Scheme); err != nil {
		return nil, err
	}
	if f.Namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{f.Namespace: {}}
	}
	if f.Selector != "" {
		selector, err := labels.Parse(f.Selector)
		if err != nil {
			return nil, err
		}
		opts.DefaultLabelSelector = selector
	}
	if f.FieldSelector != "" {
		selector, err := fields.ParseSelector(f.FieldSelector)
		if err != nil {
			return nil, err
		}
		opts.DefaultFieldSelector = selector
	}
	if f.DropManaged {
		opts.DefaultTransform = cache.TransformStripManagedFields()
	}
	return cache.New(cfg, opts)
}

// object is what the cache is asked for: the kind's typed object when the scheme knows it, else
// unstructured; PartialObjectMetadata for a metadata-only informer.
func object(f *peer.Flags, mapping *meta.RESTMapping) client.Object {
	gvk := mapping.GroupVersionKind
	if f.MetadataOnly {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		return m
	}
	if typed, err := scheme.Scheme.New(gvk); err == nil {
		if obj, ok := typed.(client.Object); ok {
			return obj
		}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}
