package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

var apps = []string{"api", "auth", "billing", "cache", "catalog", "checkout", "search", "web"}

// createPods makes `namespaces` namespaces, each with the default ServiceAccount that the
// ServiceAccount admission plugin asks for (no controller manager runs to make it), then `count`
// pods over them from `workers` goroutines.
func createPods(ctx context.Context, client kubernetes.Interface, count, namespaces, workers int) error {
	for i := 0; i < namespaces; i++ {
		if err := ensureNamespace(ctx, client, namespaceName(i)); err != nil {
			return err
		}
	}
	start := time.Now()
	var created atomic.Int64
	err := parallel(workers, count, func(i int) error {
		pod := realisticPod(namespaceName(i%namespaces), fmt.Sprintf("load-%06d", i), rand.New(rand.NewSource(int64(i))))
		_, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err == nil {
			created.Add(1)
		}
		return err
	})
	elapsed := time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "kube-load: %d pods created in %.1f s (%.0f/s)\n", created.Load(), elapsed,
		float64(created.Load())/elapsed)
	return err
}

// createConfigMaps creates `count` small ConfigMaps spread over the namespaces, as pods does.
func createConfigMaps(ctx context.Context, client kubernetes.Interface, count, namespaces, workers int) error {
	for i := 0; i < namespaces; i++ {
		if err := ensureNamespace(ctx, client, namespaceName(i)); err != nil {
			return err
		}
	}
	var created atomic.Int64
	err := parallel(workers, count, func(i int) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("config-%06d", i), Namespace: namespaceName(i % namespaces),
				Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%7)}},
			Data: map[string]string{"settings.yaml": fmt.Sprintf("replicas: %d\nlog: info\n", i%5)},
		}
		_, err := client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err == nil {
			created.Add(1)
		}
		return err
	})
	fmt.Fprintf(os.Stderr, "kube-load: %d configmaps created\n", created.Load())
	return err
}

func namespaceName(i int) string { return fmt.Sprintf("ns-%03d", i) }

func ensureNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := client.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// parallel runs fn(0..n-1) on `workers` goroutines and returns the first error.
func parallel(workers, n int, fn func(int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// realisticPod is a pod as a Deployment's ReplicaSet makes one: labels, an owner, two containers
// with ports, environment, resources, probes and mounts (about 3 KB of JSON before the server
// adds status, managedFields and the service-account volume).
func realisticPod(namespace, name string, r *rand.Rand) *corev1.Pod {
	app := apps[r.Intn(len(apps))]
	track := "stable"
	if r.Intn(5) == 0 {
		track = "canary"
	}
	labels := map[string]string{"app": app, "tier": []string{"frontend", "backend"}[r.Intn(2)],
		"track": track, "pod-template-hash": fmt.Sprintf("%08x", r.Uint32())}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace, Labels: labels,
			Annotations: map[string]string{"kube-load/generation": "0", "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
		},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{appContainer(app, r), sidecar()},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr(int64(30)),
			DNSPolicy:                     corev1.DNSClusterFirst,
			NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}}},
		},
	}
}

func appContainer(app string, r *rand.Rand) corev1.Container {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstrPort(8080)}},
		InitialDelaySeconds: 5, PeriodSeconds: 10}
	return corev1.Container{
		Name:  app,
		Image: fmt.Sprintf("registry.example.com/%s:1.%d.%d", app, r.Intn(20), r.Intn(100)),
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
			{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "APP_NAME", Value: app},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		},
		VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/" + app, ReadOnly: true}},
		LivenessProbe:  probe,
		ReadinessProbe: probe,
	}
}

func sidecar() corev1.Container {
	return corev1.Container{
		Name:  "log-shipper",
		Image: "registry.example.com/log-shipper:2.4.1",
		Args:  []string{"--input=/var/log/app", "--output=stdout"},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func intstrPort(port int) intstr.IntOrString { return intstr.FromInt32(int32(port)) }
