// Package netproxy is a loopback TCP proxy for tests that take a server
// (a database) away from a running client and give it back.
package netproxy

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy forwards TCP connections from Addr to a target until cut.
type Proxy struct {
	// Addr is the loopback address clients dial instead of the target.
	Addr string

	t      testing.TB
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
	wg     sync.WaitGroup
}

// Start listens on a free loopback port and forwards every connection to
// target; the test fails if it cannot listen. The proxy is cut and waited
// for when the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	p := &Proxy{t: t, target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.Addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() {
		p.Cut()
		p.wg.Wait()
	})
	return p
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, d)
			p.mu.Unlock()
			p.wg.Go(func() { io.Copy(d, c); d.Close() })
			p.wg.Go(func() { io.Copy(c, d); c.Close() })
		}
	})
}

// Cut closes the listener and every forwarded connection: the target is
// gone for whoever talks through the proxy.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Restore listens again on Addr; the test fails if the port cannot be
// taken back within a second.
func (p *Proxy) Restore() {
	p.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger briefly
		if ln, err = net.Listen("tcp", p.Addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("proxy: listen again on %s: %v", p.Addr, err)
	}
	p.serve(ln)
}

// ClosedAddr returns a loopback address nothing listens on.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
