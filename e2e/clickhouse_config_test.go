package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// clickHouseBinary is Debian's clickhouse-server (18.16), installed by .ci/deps.
const clickHouseBinary = "/usr/sbin/clickhouse-server"

// chServer is one ClickHouse server process on loopback with its own ports and dirs.
type chServer struct {
	replica          string // the {replica} macro: r1, r2
	dir              string // config, data, tmp and logs
	tcp, http, inter int
	cmd              *exec.Cmd
	waited           chan struct{}
	client           *http.Client
}

// chConfig fills the server's config.xml: its ports and paths, the ZooKeeper (or zkraft)
// members with a digest identity (ClickHouse then creates every node with the ACL
// auth::cdrwa, for its identity only), the macros, the cluster of both replicas for ON CLUSTER DDL and the path of
// the distributed DDL queue.
type chConfig struct {
	Dir                string
	TCP, HTTP, Inter   int
	ZooKeeper          []chNode
	SessionTimeoutMs   int
	Shard, Replica     string
	ClusterName        string
	ClusterReplicaTCPs []int
}

var chConfigXML = template.Must(template.New("config").Parse(`<?xml version="1.0"?>
<yandex>
  <logger>
    <level>trace</level>
    <log>{{.Dir}}/server.log</log>
    <errorlog>{{.Dir}}/server.err.log</errorlog>
    <size>200M</size>
    <count>1</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>{{.TCP}}</tcp_port>
  <http_port>{{.HTTP}}</http_port>
  <interserver_http_port>{{.Inter}}</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <path>{{.Dir}}/data/</path>
  <tmp_path>{{.Dir}}/tmp/</tmp_path>
  <user_files_path>{{.Dir}}/user_files/</user_files_path>
  <format_schema_path>{{.Dir}}/format_schemas/</format_schema_path>
  <users_config>{{.Dir}}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>50</max_concurrent_queries>
  <zookeeper>
{{- range $i, $n := .ZooKeeper}}
    <node index="{{$i}}"><host>{{$n.Host}}</host><port>{{$n.Port}}</port></node>
{{- end}}
    <session_timeout_ms>{{.SessionTimeoutMs}}</session_timeout_ms>
    <operation_timeout_ms>5000</operation_timeout_ms>
    <identity>clickhouse:e2e-secret</identity>
  </zookeeper>
  <macros>
    <shard>{{.Shard}}</shard>
    <replica>{{.Replica}}</replica>
  </macros>
  <remote_servers>
    <{{.ClusterName}}>
      <shard>
        <internal_replication>true</internal_replication>
{{- range .ClusterReplicaTCPs}}
        <replica><host>127.0.0.1</host><port>{{.}}</port></replica>
{{- end}}
      </shard>
    </{{.ClusterName}}>
  </remote_servers>
  <distributed_ddl>
    <path>/clickhouse/task_queue/ddl</path>
  </distributed_ddl>
</yandex>
`))

// chUsersXML is a default user without password reachable from loopback only.
const chUsersXML = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>2000000000</max_memory_usage>
      <distributed_ddl_task_timeout>90</distributed_ddl_task_timeout>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval>
        <duration>3600</duration>
        <queries>0</queries>
        <errors>0</errors>
        <result_rows>0</result_rows>
        <read_rows>0</read_rows>
        <execution_time>0</execution_time>
      </interval>
    </default>
  </quotas>
</yandex>
`

// chNode is one ZooKeeper member as ClickHouse's config names it.
type chNode struct{ Host, Port string }

// startClickHousePair starts two replicas of shard 01 (r1, r2) pointed at the given
// ZooKeeper members. Both are stopped at cleanup, also when the test fails.
func startClickHousePair(t *testing.T, zooKeeper []string, sessionTimeout time.Duration) [2]*chServer {
	t.Helper()
	var pair [2]*chServer
	var tcps []int
	for i := range pair {
		s := &chServer{replica: fmt.Sprintf("r%d", i+1), dir: t.TempDir(),
			client: &http.Client{Timeout: 2 * time.Minute}}
		for _, p := range []*int{&s.tcp, &s.http, &s.inter} {
			port, err := ztest.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			*p = port
		}
		tcps = append(tcps, s.tcp)
		pair[i] = s
	}
	var nodes []chNode
	for _, a := range zooKeeper {
		host, port, _ := strings.Cut(a, ":")
		nodes = append(nodes, chNode{host, port})
	}
	for _, s := range pair {
		cfg := chConfig{Dir: s.dir, TCP: s.tcp, HTTP: s.http, Inter: s.inter, ZooKeeper: nodes,
			SessionTimeoutMs: int(sessionTimeout / time.Millisecond), Shard: "01", Replica: s.replica,
			ClusterName: "pair", ClusterReplicaTCPs: tcps}
		if err := s.start(t, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range pair {
		if err := s.awaitReady(60 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	return pair
}

func (s *chServer) start(t *testing.T, cfg chConfig) error {
	for _, d := range []string{"data", "tmp", "user_files", "format_schemas"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return err
		}
	}
	var b strings.Builder
	if err := chConfigXML.Execute(&b, cfg); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.dir, "config.xml"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.dir, "users.xml"), []byte(chUsersXML), 0o644); err != nil {
		return err
	}
	out, err := os.Create(filepath.Join(s.dir, "stdout.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(clickHouseBinary, "--config-file="+filepath.Join(s.dir, "config.xml"))
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	s.cmd, s.waited = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		out.Close()
		close(s.waited)
	}()
	t.Cleanup(s.stop)
	return nil
}

// stop sends SIGTERM to the process group, SIGKILL after 10 s; ClickHouse 18.16 takes a
// while to shut down when its ZooKeeper is gone.
func (s *chServer) stop() {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.waited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.waited
	}
}

func (s *chServer) awaitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		out, err := s.query("SELECT 1", nil)
		if err == nil && strings.TrimSpace(out) == "1" {
			return nil
		}
		select {
		case <-s.waited:
			return fmt.Errorf("clickhouse %s exited during start:\n%s\n%s", s.replica, s.tail("stdout.log"), s.tail("server.err.log"))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("clickhouse %s not ready within %v: %v\n%s", s.replica, limit, err, s.tail("server.err.log"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// errQuery is a query ClickHouse answered with an error (as opposed to no answer).
var errQuery = errors.New("clickhouse refused the query")

// query sends sql over the HTTP interface (settings as URL parameters) and returns the
// body in TabSeparated format. wait_end_of_query makes ClickHouse answer only when the
// query is done, so a 200 means the insert is acknowledged.
func (s *chServer) query(sql string, settings map[string]string) (string, error) {
	v := url.Values{"wait_end_of_query": {"1"}}
	for k, x := range settings {
		v.Set(k, x)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		fmt.Sprintf("http://127.0.0.1:%d/?%s", s.http, v.Encode()), strings.NewReader(sql))
	if err != nil {
		return "", err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: %s: %s", errQuery, firstLine(sql), strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// must runs a query that has to succeed.
func (s *chServer) must(t *testing.T, sql string) string {
	t.Helper()
	out, err := s.query(sql, nil)
	if err != nil {
		t.Fatalf("%s: %v", s.replica, err)
	}
	return strings.TrimSpace(out)
}

// detachedParts counts the entries of table t's detached directory.
func (s *chServer) detachedParts(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(s.dir, "data", "data", "default", "t", "detached"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(entries)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

func (s *chServer) tail(name string) string {
	b, _ := os.ReadFile(filepath.Join(s.dir, name))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

var (
	chLogLine  = regexp.MustCompile(`^\d{4}\.\d\d\.\d\d \d\d:\d\d:\d\d\.\d+ \[ *\d+ \] \{[^}]*\} <(\w+)> (.*)$`)
	chNumbers  = regexp.MustCompile(`\d+`)
	chLogTopic = regexp.MustCompile(`(?i)zookeeper|coordination|exception`)
)

// zooKeeperTrouble reads the server log and counts, by message with digits blanked, the
// warnings and errors that mention ZooKeeper, Coordination or an exception.
func (s *chServer) zooKeeperTrouble() map[string]int {
	f, err := os.Open(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return map[string]int{"cannot read server.log: " + err.Error(): 1}
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := chLogLine.FindStringSubmatch(sc.Text())
		if m == nil || (m[1] != "Error" && m[1] != "Warning") || !chLogTopic.MatchString(m[2]) {
			continue
		}
		msg := m[2]
		if len(msg) > 200 {
			msg = msg[:200]
		}
		counts[m[1]+" "+chNumbers.ReplaceAllString(msg, "N")]++
	}
	return counts
}

// formatCounts lists counts, most frequent first.
func formatCounts(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %5d  %s\n", counts[k], k)
	}
	return b.String()
}
