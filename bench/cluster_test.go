package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/cell/hashslot"
)

func TestEvenSlots(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, "[[0 16383]]"},
		{2, "[[0 8191] [8192 16383]]"},
		// redis-cli --cluster create's split of 3 masters.
		{3, "[[0 5460] [5461 10922] [10923 16383]]"},
	} {
		if got := fmt.Sprint(evenSlots(tc.n)); got != tc.want {
			t.Errorf("evenSlots(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
	for n := 1; n <= 64; n++ {
		r := evenSlots(n)
		if len(r) != n || r[0][0] != 0 || r[n-1][1] != hashslot.Count-1 {
			t.Fatalf("evenSlots(%d) = %v", n, r)
		}
		for i := 1; i < n; i++ {
			if r[i][0] != r[i-1][1]+1 || r[i][1] < r[i][0] {
				t.Fatalf("evenSlots(%d): ranges %v and %v", n, r[i-1], r[i])
			}
		}
	}
}

// TestSplitKeys: every key lands in exactly the part of the node that
// serves its slot, in its original encoding.
func TestSplitKeys(t *testing.T) {
	keys := newKeyTable("user:", ":reply", 1000)
	c := &benchCluster{}
	for _, r := range evenSlots(3) {
		c.nodes = append(c.nodes, &clusterNode{first: r[0], last: r[1]})
	}
	parts := splitKeys(keys, func(name string) int { return c.owner(hashslot.Of([]byte(name))) }, 3)
	total := 0
	for i, p := range parts {
		if p == nil || p.len() < 250 {
			t.Fatalf("part %d: %v keys of 1000", i, p)
		}
		for j := range p.len() {
			name := p.name(j)
			if s := hashslot.Of([]byte(name)); s < c.nodes[i].first || s > c.nodes[i].last {
				t.Errorf("%s (slot %d) in part %d", name, s, i)
			}
		}
		total += p.len()
	}
	if total != 1000 {
		t.Errorf("%d keys in the parts, want 1000", total)
	}
	// A hot key: one part holds it, the others are nil.
	hot := newKeyTable("user:", ":reply", 1)
	parts = splitKeys(hot, func(name string) int { return c.owner(hashslot.Of([]byte(name))) }, 3)
	n := 0
	for _, p := range parts {
		if p != nil {
			n++
			if !bytes.Equal(p.buf, hot.buf) {
				t.Errorf("hot key part %q, want %q", p.buf, hot.buf)
			}
		}
	}
	if n != 1 {
		t.Errorf("the hot key is in %d parts", n)
	}
}

func TestClusterOptions(t *testing.T) {
	o, err := parseOptions([]string{"-cluster-nodes", "1, 3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.clusterNodes) != "[1 3]" || len(o.workloads) != 2 || o.workloads[0].name != "throttle" || o.workloads[1].name != "w1" {
		t.Errorf("-cluster-nodes 1,3: nodes %v, workloads %d", o.clusterNodes, len(o.workloads))
	}
	for _, bad := range [][]string{
		{"-cluster-nodes", "0"},
		{"-cluster-nodes", "1,x"},
		{"-cluster-nodes", "2", "-workloads", "w3"},
	} {
		if _, err := parseOptions(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestClusterEndToEnd(t *testing.T) {
	b := smallBench(t, "-cluster-nodes", "1,3", "-workloads", "throttle,throttle-hot,w1", "-depths", "4")
	rep, err := b.runCluster()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3*2 {
		t.Fatalf("%d rows, want 6", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		// An error reply would be a MOVED: a key sent to the wrong node.
		if r.Skipped != "" || r.Ops == 0 || r.Errors != 0 || r.RSSBytes <= 0 {
			t.Errorf("%s on %s: %+v", r.Workload, r.Server, r)
		}
	}
	if r := rep.Rows[1]; r.Server != "cellserver, 3 nodes" || r.RatioBasis != "cellserver, 1 node" || r.OpsRatio <= 0 {
		t.Errorf("3-node row: %+v", r)
	}
	var out bytes.Buffer
	rep.writeMarkdown(&out)
	for _, want := range []string{"| throttle | 4 | cellserver, 3 nodes |", "| vs fewest nodes |", "summed over the nodes"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
