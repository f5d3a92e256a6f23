// kube-load writes to a real API server as the conformance runs need, through client-go:
//
//	kube-load pods    --count N [--namespaces M] [--workers W]   realistic pods, in parallel
//	kube-load configmaps --count N [--namespaces M]              ConfigMaps, in parallel
//	kube-load churn   --rate R --duration D                      creates, updates, label flips, deletes
//	kube-load truth   [--resource pods|configmaps]               every object as "namespace/name resourceVersion"
//	kube-load compare --deltas FILE [--resource pods|configmaps] kinformer-watch's delta lines against the truth
//
// Each takes --kubeconfig (default: KUBECONFIG). pods and churn print their rate on stderr;
// compare prints each difference and exits 1 if there is one.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: kube-load pods|churn|truth|compare [flags]"))
	}
	verb, args := os.Args[1], os.Args[2:]
	flags := flag.NewFlagSet("kube-load "+verb, flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", os.Getenv("KUBECONFIG"), "the API server's kubeconfig")
	count := flags.Int("count", 1000, "pods: how many")
	namespaces := flags.Int("namespaces", 10, "pods: spread over this many namespaces (ns-000, ...)")
	workers := flags.Int("workers", 32, "pods and churn: requests in flight")
	rate := flags.Float64("rate", 50, "churn: writes per second")
	duration := flags.Duration("duration", 10*time.Second, "churn: for how long")
	deltas := flags.String("deltas", "", "compare: kinformer-watch's output")
	resource := flags.String("resource", "pods", "truth and compare: pods or configmaps")
	_ = flags.Parse(args)

	client, err := connect(*kubeconfig, *workers)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	switch verb {
	case "pods":
		err = createPods(ctx, client, *count, *namespaces, *workers)
	case "configmaps":
		err = createConfigMaps(ctx, client, *count, *namespaces, *workers)
	case "churn":
		err = churn(ctx, client, *rate, *duration, *workers)
	case "truth":
		err = printTruth(ctx, client, *resource)
	case "compare":
		err = compare(ctx, client, *deltas, *resource)
	default:
		err = fmt.Errorf("unknown verb %q: pods, configmaps, churn, truth or compare", verb)
	}
	if err != nil {
		fail(err)
	}
}

// connect makes a clientset whose client-side rate limit does not hold the writers back: the
// server's own limits (API Priority and Fairness) are what the runs are about.
func connect(kubeconfig string, workers int) (kubernetes.Interface, error) {
	if kubeconfig == "" {
		return nil, fmt.Errorf("no kubeconfig: pass --kubeconfig or set KUBECONFIG")
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	config.QPS = float32(100 * workers)
	config.Burst = 200 * workers
	return kubernetes.NewForConfig(config)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kube-load:", err)
	os.Exit(1)
}
