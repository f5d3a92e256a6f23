// Package deltas prints an informer's handler events as kinformer-watch prints its deltas, one
// JSON line each, so that every peer's output is read and compared the same way:
//
//	{"type":"ADDED|UPDATED|DELETED","key":"ns/name","resourceVersion":"...",
//	 "initialList":true|false,"finalStateUnknown":true|false}
//	{"type":"SYNCED"}
package deltas

import (
	"bufio"
	"encoding/json"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

type line struct {
	Type              string `json:"type"`
	Key               string `json:"key,omitempty"`
	ResourceVersion   string `json:"resourceVersion,omitempty"`
	InitialList       bool   `json:"initialList,omitempty"`
	FinalStateUnknown bool   `json:"finalStateUnknown,omitempty"`
}

// Printer writes lines to stdout, buffered and flushed every few milliseconds (a line per event
// unbuffered would cost the peer a write(2) per event, which kinformer-watch does not pay).
type Printer struct {
	mu  sync.Mutex
	out *bufio.Writer
}

func NewPrinter() *Printer {
	p := &Printer{out: bufio.NewWriterSize(os.Stdout, 1<<16)}
	go func() {
		for range time.Tick(20 * time.Millisecond) {
			p.Flush()
		}
	}()
	return p
}

func (p *Printer) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.Flush()
}

func (p *Printer) print(l line) {
	b, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.Write(b)
	p.out.WriteByte('\n')
}

// Synced prints the SYNCED line and flushes.
func (p *Printer) Synced() {
	p.print(line{Type: "SYNCED"})
	p.Flush()
}

func (p *Printer) object(kind string, obj any, initial, unknown bool) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	rv := ""
	if m, err := meta.Accessor(obj); err == nil {
		rv = m.GetResourceVersion()
	}
	p.print(line{Type: kind, Key: key, ResourceVersion: rv, InitialList: initial, FinalStateUnknown: unknown})
}

// Handler is the event handler that prints each notification.
func (p *Printer) Handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { p.object("ADDED", obj, initial, false) },
		UpdateFunc: func(_, obj any) { p.object("UPDATED", obj, false, false) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				p.object("DELETED", tomb.Obj, false, true)
				return
			}
			p.object("DELETED", obj, false, false)
		},
	}
}
