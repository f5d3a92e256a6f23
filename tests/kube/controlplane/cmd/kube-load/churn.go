package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// churnStats counts what churn wrote; failed writes are retried by the next tick, not counted.
type churnStats struct {
	sync.Mutex
	created, updated, flipped, deleted, failed int
}

// churn writes at `rate` per second for `duration`: a quarter each creates, annotation updates,
// label flips and deletes, on pods picked from a list taken at the start (and those it creates).
// A write that meets a conflict, a missing pod or a server away (restarting) is counted as failed
// and the run goes on: the conformance runs restart the server under it.
func churn(ctx context.Context, client kubernetes.Interface, rate float64, duration time.Duration, workers int) error {
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var pool podPool
	for _, p := range pods.Items {
		pool.add(p.Namespace, p.Name)
	}
	if len(pool.keys) == 0 {
		return fmt.Errorf("churn: no pods to churn (run kube-load pods first)")
	}
	var stats churnStats
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for n := 0; time.Since(start) < duration; n++ {
		<-tick.C
		sem <- struct{}{}
		wg.Add(1)
		go func(n int) {
			defer func() { <-sem; wg.Done() }()
			churnOne(ctx, client, &pool, &stats, n)
		}(n)
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "kube-load: churn %.1f s: %d created, %d updated, %d label flips, %d deleted, %d failed\n",
		time.Since(start).Seconds(), stats.created, stats.updated, stats.flipped, stats.deleted, stats.failed)
	return nil
}

func churnOne(ctx context.Context, client kubernetes.Interface, pool *podPool, stats *churnStats, n int) {
	r := rand.New(rand.NewSource(time.Now().UnixNano() + int64(n)))
	var err error
	var counter *int
	op := n % 4
	if pool.size() < 2 {
		op = 0 // nothing left to update or delete: create
	}
	switch op {
	case 0:
		ns := pool.namespace(r)
		pod := realisticPod(ns, fmt.Sprintf("churn-%d-%06d", time.Now().Unix(), n), r)
		_, err = client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			pool.add(ns, pod.Name)
		}
		counter = &stats.created
	case 1:
		ns, name := pool.pick(r)
		patch := `{"metadata":{"annotations":{"kube-load/generation":"` + strconv.Itoa(n) + `"}}}`
		_, err = client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		counter = &stats.updated
	case 2:
		ns, name := pool.pick(r)
		track := []string{"stable", "canary"}[r.Intn(2)]
		patch := `{"metadata":{"labels":{"track":"` + track + `"}}}`
		_, err = client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		counter = &stats.flipped
	default:
		ns, name := pool.take(r)
		err = client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
		counter = &stats.deleted
	}
	stats.Lock()
	defer stats.Unlock()
	if err != nil && !apierrors.IsNotFound(err) {
		stats.failed++
		return
	}
	*counter++
}

// podPool is the set of pods churn may touch, as namespace/name.
type podPool struct {
	sync.Mutex
	keys       [][2]string
	namespaces []string
	seen       map[string]bool
}

func (p *podPool) add(namespace, name string) {
	p.Lock()
	defer p.Unlock()
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !p.seen[namespace] {
		p.seen[namespace] = true
		p.namespaces = append(p.namespaces, namespace)
	}
	p.keys = append(p.keys, [2]string{namespace, name})
}

func (p *podPool) size() int {
	p.Lock()
	defer p.Unlock()
	return len(p.keys)
}

// namespace picks one of the namespaces the pool's pods are in.
func (p *podPool) namespace(r *rand.Rand) string {
	p.Lock()
	defer p.Unlock()
	return p.namespaces[r.Intn(len(p.namespaces))]
}

func (p *podPool) pick(r *rand.Rand) (string, string) {
	p.Lock()
	defer p.Unlock()
	k := p.keys[r.Intn(len(p.keys))]
	return k[0], k[1]
}

// take picks a pod and removes it from the pool (it is about to be deleted).
func (p *podPool) take(r *rand.Rand) (string, string) {
	p.Lock()
	defer p.Unlock()
	i := r.Intn(len(p.keys))
	k := p.keys[i]
	p.keys[i] = p.keys[len(p.keys)-1]
	p.keys = p.keys[:len(p.keys)-1]
	return k[0], k[1]
}
