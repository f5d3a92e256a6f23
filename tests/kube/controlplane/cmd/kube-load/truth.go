package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// truth is every object of `resource` the server holds, namespace/name -> resourceVersion, from
// one consistent list (paged: the continue tokens keep every page at the first one's
// resourceVersion).
func truth(ctx context.Context, client kubernetes.Interface, resource string) (map[string]string, string, error) {
	out := map[string]string{}
	options := metav1.ListOptions{Limit: 500}
	for {
		var items []metav1.ObjectMeta
		var page metav1.ListMeta
		switch resource {
		case "pods":
			list, err := client.CoreV1().Pods("").List(ctx, options)
			if err != nil {
				return nil, "", err
			}
			for _, p := range list.Items {
				items = append(items, p.ObjectMeta)
			}
			page = list.ListMeta
		case "configmaps":
			list, err := client.CoreV1().ConfigMaps("").List(ctx, options)
			if err != nil {
				return nil, "", err
			}
			for _, c := range list.Items {
				items = append(items, c.ObjectMeta)
			}
			page = list.ListMeta
		default:
			return nil, "", fmt.Errorf("unknown resource %q: pods or configmaps", resource)
		}
		for _, m := range items {
			out[m.Namespace+"/"+m.Name] = m.ResourceVersion
		}
		if page.Continue == "" {
			return out, page.ResourceVersion, nil
		}
		options.Continue = page.Continue
	}
}

func printTruth(ctx context.Context, client kubernetes.Interface, resource string) error {
	objects, _, err := truth(ctx, client, resource)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(objects))
	for k := range objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, k := range keys {
		fmt.Fprintln(w, k, objects[k])
	}
	return nil
}

// deltaLine is one line of kinformer-watch's default output.
type deltaLine struct {
	Type            string `json:"type"`
	Key             string `json:"key"`
	ResourceVersion string `json:"resourceVersion"`
}

// fold replays kinformer-watch's delta lines into the state it printed: key -> resourceVersion.
func fold(path string) (map[string]string, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	state := map[string]string{}
	synced := false
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var d deltaLine
		if err := json.Unmarshal(scanner.Bytes(), &d); err != nil {
			return nil, false, fmt.Errorf("%s: not a delta line: %q", path, scanner.Text())
		}
		switch d.Type {
		case "SYNCED":
			synced = true
		case "DELETED":
			delete(state, d.Key)
		default: // ADDED, UPDATED, SYNC
			state[d.Key] = d.ResourceVersion
		}
	}
	return state, synced, scanner.Err()
}

// compare prints how the printed state differs from the server's and fails if it does.
func compare(ctx context.Context, client kubernetes.Interface, deltas, resource string) error {
	printed, synced, err := fold(deltas)
	if err != nil {
		return err
	}
	if !synced {
		return fmt.Errorf("%s: no SYNCED line yet", deltas)
	}
	server, rv, err := truth(ctx, client, resource)
	if err != nil {
		return err
	}
	missing, extra, stale := 0, 0, 0
	for k, v := range server {
		got, ok := printed[k]
		switch {
		case !ok:
			missing++
			report(missing+extra+stale, "missing %s (rv %s)", k, v)
		case got != v:
			stale++
			report(missing+extra+stale, "stale %s: printed rv %s, server rv %s", k, got, v)
		}
	}
	for k, v := range printed {
		if _, ok := server[k]; !ok {
			extra++
			report(missing+extra+stale, "extra %s (printed rv %s)", k, v)
		}
	}
	fmt.Printf("%d %s at rv %s; %d printed: missing %d, extra %d, stale %d\n", len(server), resource, rv,
		len(printed), missing, extra, stale)
	if missing+extra+stale > 0 {
		return fmt.Errorf("%s differs from the server", deltas)
	}
	return nil
}

// report prints the first few differences.
func report(n int, format string, args ...any) {
	if n <= 10 {
		fmt.Printf("  "+format+"\n", args...)
	}
}
