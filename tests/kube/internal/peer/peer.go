// Package peer holds what the Go peers share: their command line (kinformer-watch's, where the
// same thing is meant), the REST config it describes, and the resource it names.
package peer

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

type Flags struct {
	Server, Token, Kubeconfig string
	Insecure                  bool
	Namespace                 string
	AllNamespaces             bool
	Selector, FieldSelector   string
	Protobuf                  bool
	WatchList                 string // "true", "false" or "" (client-go's default)
	MetadataOnly, DropManaged bool
	QPS                       float64
	Resource                  string
}

// Parse reads the command line of a peer called `name` (usage: what it runs).
func Parse(name, usage string) *Flags {
	f := &Flags{}
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s [flags] RESOURCE\n%s\n", name, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.Server, "s", "", "API server URL")
	fs.StringVar(&f.Server, "server", "", "API server URL")
	fs.StringVar(&f.Token, "token", "", "bearer token")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig file (without --server)")
	fs.BoolVar(&f.Insecure, "insecure-skip-tls-verify", false, "do not verify the server's certificate")
	fs.StringVar(&f.Namespace, "n", "", "one namespace")
	fs.BoolVar(&f.AllNamespaces, "A", false, "every namespace (the default)")
	fs.StringVar(&f.Selector, "l", "", "label selector")
	fs.StringVar(&f.FieldSelector, "field-selector", "", "field selector")
	fs.BoolVar(&f.Protobuf, "protobuf", false, "ask for protobuf (built-in kinds), as kube-controller-manager does")
	fs.StringVar(&f.WatchList, "watch-list", "", "true or false: client-go's WatchListClient (streaming lists); unset: its default")
	fs.BoolVar(&f.MetadataOnly, "metadata-only", false, "a metadata-only informer (PartialObjectMetadata)")
	fs.BoolVar(&f.DropManaged, "drop-managed-fields", false, "a transform that drops metadata.managedFields")
	fs.Float64Var(&f.QPS, "qps", 0, "client-side rate limit (0: none, as a benchmark wants)")
	fs.Parse(os.Args[1:])
	if fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	f.Resource = fs.Arg(0)
	if f.WatchList != "" {
		// client-go reads its feature gates from the environment, once, at first use.
		os.Setenv("KUBE_FEATURE_WatchListClient", f.WatchList)
	}
	return f
}

// Config is the REST config the flags describe.
func (f *Flags) Config() (*rest.Config, error) {
	var cfg *rest.Config
	if f.Server != "" {
		cfg = &rest.Config{Host: f.Server, BearerToken: f.Token}
		cfg.TLSClientConfig.Insecure = f.Insecure
	} else {
		loaded, err := clientcmd.BuildConfigFromFlags("", f.Kubeconfig)
		if err != nil {
			return nil, err
		}
		cfg = loaded
	}
	if f.QPS > 0 {
		cfg.QPS, cfg.Burst = float32(f.QPS), int(f.QPS)
	} else {
		cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	}
	if f.Protobuf {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	return cfg, nil
}

// Mapping resolves the resource argument ("pods", "deployments.apps") through discovery.
func (f *Flags) Mapping(cfg *rest.Config) (*meta.RESTMapping, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(f.Resource).WithVersion(""))
	if err != nil {
		return nil, err
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return nil, err
	}
	return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// Start reads the command line, and resolves the connection and the resource it names; it exits
// with 1 when either fails.
func Start(name, usage string) (*Flags, *rest.Config, *meta.RESTMapping) {
	flags := Parse(name, usage)
	cfg, err := flags.Config()
	if err != nil {
		Fail(name, err)
	}
	mapping, err := flags.Mapping(cfg)
	if err != nil {
		Fail(name, err)
	}
	return flags, cfg, mapping
}

// Fail prints the error and exits with 1.
func Fail(name string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	os.Exit(1)
}
