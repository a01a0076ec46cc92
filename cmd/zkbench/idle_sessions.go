package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// idleSessionSettle is how long the sessions sit open before RSS is read: the servers'
// work for the connects (their log entries, the collector's cycle after them) is done.
const idleSessionSettle = 5 * time.Second

// idleSessionTimeout (ms) is what the idle sessions ask for: both servers' most by
// default (20 ticks of 2 s), so none expires while they are opened and measured.
const idleSessionTimeout = 40000

// measureIdleSessions opens n sessions on each target, spread over its members, lets
// them sit idle, and prints what each open session adds to the servers' RSS: the cost of
// a client that holds a session and does nothing, as most of a coordination service's
// clients do most of the time. The sessions are raw connections (a ConnectRequest and
// its answer, nothing after), so the load generator's own cost per session is a socket.
func measureIdleSessions(cfg config, targets []*target, n int, out io.Writer) {
	parts := make([]string, 0, len(targets))
	perSession := make([]float64, len(targets))
	for i, t := range targets {
		before := rss(t.pids...)
		conns, err := openIdleSessions(t.members, n)
		if err == nil {
			cfg.logf("%s: %d idle sessions open", t.name, n)
			time.Sleep(idleSessionSettle)
		}
		after := rss(t.pids...)
		closeIdleSessions(cfg, t.name, conns)
		if err != nil || before <= 0 || after <= 0 {
			perSession[i] = -1
			parts = append(parts, fmt.Sprintf("%s n/a (%v)", t.name, err))
			continue
		}
		perSession[i] = float64(after-before) / float64(n) / 1024
		parts = append(parts, fmt.Sprintf("%s %.1f (RSS %d -> %d MiB)", t.name, perSession[i], before>>20, after>>20))
	}
	line := fmt.Sprintf("RSS KiB per idle session (%d sessions): %s", n, strings.Join(parts, ", "))
	if len(perSession) == 2 && perSession[0] >= 0 && perSession[1] > 0 {
		line += fmt.Sprintf(" (ratio %.2fx)", perSession[0]/perSession[1])
	}
	fmt.Fprintln(out, line)
	fmt.Fprintln(out)
}

// openIdleSessions opens n sessions, session i on members[i mod len(members)], 16 at a
// time, each waiting for its ConnectResponse; if any fails, it closes the others.
func openIdleSessions(members []string, n int) ([]net.Conn, error) {
	conns, failed, first := inParallel(n, 16, func(i int) (net.Conn, error) { return openIdleSession(members[i%len(members)]) })
	if failed > 0 {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		return nil, fmt.Errorf("%d of %d sessions failed, first: %w", failed, n, first)
	}
	return conns, nil
}

func openIdleSession(addr string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, connectTimeout)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(connectTimeout))
	req := &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: idleSessionTimeout, Passwd: make([]byte, 16)}}
	if _, err := c.Write(jute.AppendFrame(nil, req)); err != nil {
		c.Close()
		return nil, err
	}
	b, err := jute.ReadFrame(bufio.NewReaderSize(c, 64), nil, jute.DefaultMaxBuffer)
	if err == nil {
		var resp jute.Connected
		d := jute.NewDecoder(b)
		resp.Decode(d)
		if err = d.Err; err == nil && resp.SessionId == 0 {
			err = fmt.Errorf("%s refused the session", addr)
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// closeIdleSessions ends the sessions as a client's close does, with closeSession and its
// answer, 16 at a time. Left to expire, they would all expire together a session timeout
// later, in the middle of the first cells of one target and not the other's.
func closeIdleSessions(cfg config, name string, conns []net.Conn) {
	_, failed, first := inParallel(len(conns), 16, func(i int) (struct{}, error) { return struct{}{}, closeIdleSession(conns[i]) })
	if failed > 0 {
		cfg.logf("%s: %d of %d idle sessions not closed (left to expire), first: %v", name, failed, len(conns), first)
	}
}

func closeIdleSession(c net.Conn) error {
	defer c.Close()
	c.SetDeadline(time.Now().Add(connectTimeout))
	if _, err := c.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpCloseSession})); err != nil {
		return err
	}
	b, err := jute.ReadFrame(bufio.NewReaderSize(c, 64), nil, jute.DefaultMaxBuffer)
	if err != nil {
		return err
	}
	var h jute.ReplyHeader
	d := jute.NewDecoder(b)
	h.Decode(d)
	if d.Err == nil && h.Err != 0 {
		return fmt.Errorf("closeSession: error %d", h.Err)
	}
	return d.Err
}
