package server

import "net/http"

// Which HTTP methods the AdminServer and /metrics answer, as ZooKeeper's Jetty servlets do
// (checked against 3.8.0's AdminServer, TestAdminHTTPMethodsMatchZooKeeper): on every
// path, whether a command or not, TRACE is refused 403 (its constrainTraceMethod,
// ZOOKEEPER-3731), OPTIONS lists what the servlet serves, the HTTP/1.1 methods the
// servlet does not implement are 405 and any other method 501; the served ones go on to
// the handler (HEAD as GET without the body). 3.8.0's /metrics (Prometheus' servlet)
// serves POST as GET; its TRACE constraint came with 3.8.5 and 3.9.0.

// jettyMethods serves GET and HEAD, and the extra methods given, through h; it answers
// every other method as ZooKeeper's servlets do.
func jettyMethods(h http.Handler, extra ...string) http.Handler {
	served := map[string]bool{http.MethodGet: true, http.MethodHead: true}
	allow := "GET, HEAD"
	for _, m := range extra {
		served[m] = true
		allow += ", " + m
	}
	allow += ", TRACE, OPTIONS"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case served[r.Method]:
			h.ServeHTTP(w, r)
		case r.Method == http.MethodTrace:
			w.WriteHeader(http.StatusForbidden)
		case r.Method == http.MethodOptions:
			w.Header().Set("Allow", allow)
			w.WriteHeader(http.StatusOK)
		case r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusMethodNotAllowed)
		default:
			w.WriteHeader(http.StatusNotImplemented)
		}
	})
}
