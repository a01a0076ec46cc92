package server

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// jacksonJSON renders an AdminServer answer as ZooKeeper's Jetty AdminServer writes it
// (Jackson's default pretty printer): `"key" : value`, two spaces of indent per object,
// arrays on one line (`[ 1, 2 ]`, `[ {` for objects), `{ }` and `[ ]` when empty,
// doubles as Java prints them (`0.0`), and no newline at the end, so a probe that looks
// for `"error" : null` finds it. The keys come in ZooKeeper's order (jacksonOrder). Its
// CommandResponse.toMap puts the answer's own keys first, then "command", then "error";
// an answer whose command set "error" itself (ownError) keeps it among its own keys, so
// it comes before "command" (set_trace_mask without a mask, leader on a standalone
// server).
func jacksonJSON(out map[string]any, ownError bool) []byte {
	name, _ := out["command"].(string)
	keys := make([]string, 0, len(out))
	for k := range out {
		if k != "command" && k != "error" {
			keys = append(keys, k)
		}
	}
	keys = jacksonKeys(keys, jacksonOrder["command:"+name])
	last := []string{"command", "error"}
	if ownError {
		last = []string{"error", "command"}
	}
	for _, k := range last {
		if _, ok := out[k]; ok {
			keys = append(keys, k)
		}
	}
	var b bytes.Buffer
	writeJacksonObject(&b, keys, func(k string) reflect.Value { return reflect.ValueOf(out[k]) }, 0)
	return b.Bytes()
}

// writeAdminJSON answers with body, its length given (as Jetty gives it, for HEAD too,
// where Go would send a long body chunked).
func writeAdminJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// jacksonOrder is the order of ZooKeeper 3.8.0's keys (read off its AdminServer): an
// answer's own keys by "command:" and its name, a nested object's (or the objects of an
// array's) by the key it sits under, wherever that key is. Keys it does not list follow,
// sorted. server_stats is a Java object that Jackson writes field by field, in an order
// Java's reflection does not fix (it varies between runs of 3.8.0 and between a leader
// and a standalone server); its order here is the one a standalone 3.8.0 printed most.
var jacksonOrder = map[string][]string{
	"command:stats": {"version", "read_only", "server_stats", "client_response", "proposal_stats", "node_count",
		"connections", "secure_connections"},
	"command:server_stats": {"version", "read_only", "server_stats", "client_response", "proposal_stats", "node_count"},
	"proposal_stats":       bufferStatsOrder,
	"server_stats": {"packets_sent", "packets_received", "fsync_threshold_exceed_count", "client_response_stats",
		"data_dir_size", "log_dir_size", "provider_null", "server_state", "last_processed_zxid", "outstanding_requests",
		"avg_latency", "max_latency", "min_latency", "num_alive_client_connections", "auth_failed_count",
		"non_mtlsremote_conn_count", "non_mtlslocal_conn_count", "uptime"},
	"client_response_stats": bufferStatsOrder,
	"client_response":       bufferStatsOrder,
	"connections":           connectionOrder,
	"secure_connections":    connectionOrder,
	"command:monitor": {"version", "server_state", "ephemerals_count", "num_alive_connections", "avg_latency",
		"outstanding_requests", "znode_count", "global_sessions", "non_mtls_remote_conn_count",
		"last_client_response_size", "packets_sent", "packets_received", "max_client_response_size",
		"connection_drop_probability", "watch_count", "auth_failed_count", "min_latency", "max_file_descriptor_count",
		"approximate_data_size", "open_file_descriptor_count", "local_sessions", "uptime", "max_latency",
		"outstanding_tls_handshake", "min_client_response_size", "non_mtls_local_conn_count", "proposal_count",
		"watch_bytes", "outstanding_changes_removed", "throttled_ops", "stale_requests_dropped",
		"large_requests_rejected", "insecure_admin_count", "connection_rejected",
		"cnxn_closed_without_zk_server_running", "sessionless_connections_expired", "looking_count",
		"dead_watchers_queued", "stale_requests", "connection_drop_count", "learner_proposal_received_count",
		"digest_mismatches_count", "dead_watchers_cleared", "response_packet_cache_hits", "bytes_received_count",
		"add_dead_watcher_stall_time", "request_throttle_wait_count"},
	"command:configuration": {"client_port", "data_dir", "data_log_dir", "tick_time", "max_client_cnxns",
		"min_session_timeout", "max_session_timeout", "server_id", "client_port_listen_backlog"},
	"command:environment": {"zookeeper.version", "host.name", "go.version", "os.name", "os.arch", "os.version",
		"user.name", "user.home", "user.dir", "os.memory.free", "os.memory.max", "os.memory.total"},
	"command:dump":          {"expiry_time_to_session_ids", "session_id_to_ephemeral_paths"},
	"command:watch_summary": {"num_connections", "num_paths", "num_total_watches"},
	"command:dirs":          {"datadir_size", "logdir_size"},
	"command:last_snapshot": {"zxid", "timestamp"},
	"command:observers":     {"synced_observers", "observers"},
	"command:zabstate": {"myid", "is_leader", "quorum_address", "election_address", "client_address", "voting",
		"last_zxid", "zab_epoch", "zab_counter", "zabstate"},
	"digests":        {"zxid", "digest_version", "digest"},
	"current_config": {"server_addresses", "election_addresses", "client_address", "learner_type"},
}

// bufferStatsOrder is the order of a BufferStats' keys (client_response, proposal_stats).
var bufferStatsOrder = []string{"last_buffer_size", "min_buffer_size", "max_buffer_size"}

// connectionOrder is the order of a connection's keys in cons and stat.
var connectionOrder = []string{"remote_socket_address", "interest_ops", "outstanding_requests", "packets_received",
	"packets_sent", "session_id", "last_operation", "established", "session_timeout", "last_cxid", "last_zxid",
	"last_response_time", "last_latency", "min_latency", "avg_latency", "max_latency"}

// jacksonKeys orders keys: those order lists in its order, then the rest sorted.
func jacksonKeys(keys, order []string) []string {
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return keys
}

// writeJacksonObject writes an object of keys, in that order, with their values, at
// nesting level (its members indented one level more).
func writeJacksonObject(b *bytes.Buffer, keys []string, value func(string) reflect.Value, level int) {
	if len(keys) == 0 {
		b.WriteString("{ }")
		return
	}
	b.WriteString("{\n")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(strings.Repeat("  ", level+1))
		writeJacksonString(b, k)
		b.WriteString(" : ")
		writeJacksonValue(b, value(k), level+1, k)
	}
	b.WriteString("\n" + strings.Repeat("  ", level) + "}")
}

// writeJacksonValue writes v, which sits under the key name (its order in jacksonOrder).
func writeJacksonValue(b *bytes.Buffer, v reflect.Value, level int, name string) {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		b.WriteString("null")
		return
	}
	switch v.Kind() {
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		// Keys as Jackson writes a Map's: strings as they are, integers in decimal.
		byText := map[string]reflect.Value{}
		for _, k := range v.MapKeys() {
			switch k.Kind() {
			case reflect.String:
				byText[k.String()] = k
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				byText[strconv.FormatInt(k.Int(), 10)] = k
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				byText[strconv.FormatUint(k.Uint(), 10)] = k
			default:
				panic(fmt.Sprintf("admin JSON: a map keyed by %s", k.Type()))
			}
		}
		keys := make([]string, 0, len(byText))
		for k := range byText {
			keys = append(keys, k)
		}
		writeJacksonObject(b, jacksonKeys(keys, jacksonOrder[name]), func(k string) reflect.Value {
			return v.MapIndex(byText[k])
		}, level)
		return
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("null")
			return
		}
		if v.Len() == 0 {
			b.WriteString("[ ]")
			return
		}
		b.WriteString("[ ")
		for i := range v.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJacksonValue(b, v.Index(i), level, name)
		}
		b.WriteString(" ]")
		return
	case reflect.String:
		writeJacksonString(b, v.String())
		return
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
		return
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
		return
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
		return
	case reflect.Float32, reflect.Float64:
		b.WriteString(javaDoubleText(v.Float()))
		return
	}
	// No answer holds anything else (a struct, a channel): a new one must be written
	// out as maps, slices and scalars, and a test that runs every command finds it.
	panic(fmt.Sprintf("admin JSON: no form for a %s", v.Type()))
}

// writeJacksonString writes s as a JSON string as Jackson does: quotes, backslashes and
// control characters escaped, nothing else (no \u003c for '<' as Go's encoder has).
func writeJacksonString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// javaDoubleText is a double as Jackson writes it: Java's Double.toString, "0.0", "1.5",
// and from 10^7 up or below 10^-3 "1.0E7", "5.0E-4"; not finite, as a quoted string
// ("NaN", "Infinity", "-Infinity"), as Jackson's default QUOTE_NON_NUMERIC_NUMBERS has it.
func javaDoubleText(f float64) string {
	switch {
	case math.IsNaN(f):
		return `"NaN"`
	case math.IsInf(f, 1):
		return `"Infinity"`
	case math.IsInf(f, -1):
		return `"-Infinity"`
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		return javaDouble(f)
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}
