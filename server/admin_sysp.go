package server

import (
	"os"
	"os/user"
	"runtime"
	"strconv"
	"strings"
)

// adminSystemProperties answers system_properties (sysp). ZooKeeper lists its JVM's
// system properties; zkraft has no JVM, so it lists what it has of them: the -D
// properties it was started with (SERVER_JVMFLAGS and JVMFLAGS, those it reads and those
// it ignores), and the process's facts under the names Java gives them (processFacts,
// and the separators). A -D property of one of
// those names wins, as it does in the JVM; the values of secret ones are hidden
// (secretProperty). Nothing Java-only (java.*, sun.*, jdk.*) is made up.
func (s *Server) adminSystemProperties() map[string]any {
	out := map[string]any{
		"file.encoding":  "UTF-8", // Go's strings and zkraft's files (Java 17's follows the locale)
		"file.separator": string(os.PathSeparator),
		"path.separator": string(os.PathListSeparator),
		"line.separator": "\n",
	}
	for _, kv := range processFacts() {
		out[kv[0]] = kv[1]
	}
	for k, v := range s.cfg.SystemProperties {
		if secretProperty(k) {
			v = "********"
		}
		out[k] = v
	}
	return out
}

// processFacts are the process's operating system, user and working directory under the
// names and with the values Java's system properties give them, in the order of
// ZooKeeper's Environment.list (envi): envi, the AdminServer's environment and
// system_properties all show these.
func processFacts() [][2]string {
	facts := [][2]string{{"os.name", javaOSName(runtime.GOOS)}, {"os.arch", javaOSArch(runtime.GOARCH)}}
	if release, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		facts = append(facts, [2]string{"os.version", strings.TrimSpace(string(release))})
	}
	// Java takes the user's name and home from the password database ("?" for a uid it
	// lacks), never from $USER or $HOME as Go's user.Current may.
	name, home := "?", "?"
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err == nil {
		name, home = u.Username, u.HomeDir
	}
	facts = append(facts, [2]string{"user.name", name}, [2]string{"user.home", home})
	if dir, err := os.Getwd(); err == nil {
		facts = append(facts, [2]string{"user.dir", dir})
	}
	return facts
}

// secretProperty is a property whose value system_properties hides: a password (key and
// trust stores, SASL) or the super user's digest. ZooKeeper 3.8 shows them to anyone who
// reaches its AdminServer; zkraft shows that they are set.
func secretProperty(name string) bool {
	lower := strings.ToLower(name)
	return strings.Contains(lower, "password") || strings.Contains(lower, "superdigest")
}

// javaOSName is os.name as Java reports it for Go's GOOS.
func javaOSName(goos string) string {
	switch goos {
	case "linux":
		return "Linux"
	case "darwin":
		return "Mac OS X"
	case "freebsd":
		return "FreeBSD"
	}
	return goos
}

// javaOSArch is os.arch as Java reports it for Go's GOARCH.
func javaOSArch(goarch string) string {
	switch goarch {
	case "arm64":
		return "aarch64"
	case "386":
		return "x86"
	}
	return goarch
}
