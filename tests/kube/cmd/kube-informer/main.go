// kube-informer: client-go's SharedIndexInformer as kinformer's peer in tests and benchmarks. It
// runs one informer for RESOURCE and prints each handler event as kinformer-watch prints its
// deltas (internal/deltas), then {"type":"SYNCED"} once the informer has synced; it runs until
// SIGTERM or SIGINT.
//
//	kube-informer [-s URL [--token T] | --kubeconfig F] [-n NS] [-l SEL] [--protobuf]
//	              [--watch-list=true|false] [--metadata-only] [--drop-managed-fields] RESOURCE
package main

import (
	"context"
	"os/signal"
	"syscall"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"kinformer/tests/kube/internal/deltas"
	"kinformer/tests/kube/internal/peer"
)

const name = "kube-informer"

func main() {
	flags, cfg, mapping := peer.Start(name, "client-go's SharedIndexInformer, printing kinformer-watch's delta lines")
	informer, err := newInformer(flags, cfg, mapping)
	if err != nil {
		peer.Fail(name, err)
	}
	out := deltas.NewPrinter()
	if _, err := informer.AddEventHandler(out.Handler()); err != nil {
		peer.Fail(name, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go informer.Run(ctx.Done())
	if cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		out.Synced()
	}
	<-ctx.Done()
	out.Flush()
}

// newInformer builds the informer the flags ask for: typed (built-in kinds, so protobuf can be
// used), dynamic (any other kind), or metadata-only.
func newInformer(f *peer.Flags, cfg *rest.Config, mapping *meta.RESTMapping) (cache.SharedIndexInformer, error) {
	tweak := func(o *metav1.ListOptions) {
		o.LabelSelector = f.Selector
		o.FieldSelector = f.FieldSelector
	}
	var transform cache.TransformFunc
	if f.DropManaged {
		transform = func(obj any) (any, error) {
			if m, err := meta.Accessor(obj); err == nil {
				m.SetManagedFields(nil)
			}
			return obj, nil
		}
	}
	gvr := mapping.Resource
	if f.MetadataOnly {
		client, err := metadata.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		factory := metadatainformer.NewFilteredSharedInformerFactory(client, 0, f.Namespace, tweak)
		informer := factory.ForResource(gvr).Informer()
		return informer, informer.SetTransform(transform)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(f.Namespace), informers.WithTweakListOptions(tweak),
		informers.WithTransform(transform))
	if generic, err := factory.ForResource(gvr); err == nil {
		return generic.Informer(), nil
	}
	dynamicClient, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	informer := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamicClient, 0, f.Namespace, tweak).
		ForResource(gvr).Informer()
	return informer, informer.SetTransform(transform)
}
