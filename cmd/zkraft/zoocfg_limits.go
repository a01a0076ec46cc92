package main

import (
	"fmt"
	"strconv"

	"github.com/zkraft/zkraft/server"
)

// limitKeys are ZooKeeper's connection throttle, large request bound and Netty's TLS
// guards, which it reads as system properties (registered as guardKeys are,
// registerProperty: with and without "zookeeper.", in zoo.cfg and in JVMFLAGS). Its
// integers are read as Integer.getInteger reads them: a value that is not a number
// leaves the default (zkraft warns). Its reals are read as Double.parseDouble: a value
// that is not a number stops ZooKeeper's start, and zkraft's.
var limitKeys = map[string]func(c *server.Config, v string) error{
	"largeRequestMaxBytes": javaInt(func(c *server.Config) *int { return &c.LargeRequests.MaxBytes }, func(c *server.Config, n int) error {
		if n <= 0 {
			return notice(fmt.Sprintf("%d is not positive; largeRequestMaxBytes stays %d, as in ZooKeeper", n, c.LargeRequests.MaxBytes))
		}
		c.LargeRequests.MaxBytes = n
		return nil
	}),
	"largeRequestThreshold": javaInt(func(c *server.Config) *int { return &c.LargeRequests.Threshold }, func(c *server.Config, n int) error {
		if n == 0 || n < -1 {
			c.LargeRequests.Threshold = -1
			return notice(fmt.Sprintf("%d is not -1 or positive; largeRequestThreshold is -1 (off), as in ZooKeeper", n))
		}
		c.LargeRequests.Threshold = n
		return nil
	}),
	"connection_throttle_tokens":                throttleInt(func(c *server.Config) *int { return &c.ConnThrottle.Tokens }),
	"connection_throttle_fill_time":             throttleInt(func(c *server.Config) *int { return &c.ConnThrottle.FillTime }),
	"connection_throttle_fill_count":            throttleInt(func(c *server.Config) *int { return &c.ConnThrottle.FillCount }),
	"connection_throttle_freeze_time":           throttleInt(func(c *server.Config) *int { return &c.ConnThrottle.FreezeTime }),
	"connection_throttle_global_session_weight": throttleInt(func(c *server.Config) *int { return &c.ConnThrottle.GlobalWeight }),
	"connection_throttle_local_session_weight":  throttleInt(func(c *server.Config) *int { return &c.ConnThrottle.LocalWeight }),
	"connection_throttle_renew_session_weight":  throttleInt(func(c *server.Config) *int { return &c.ConnThrottle.RenewWeight }),
	"connection_throttle_drop_increase":         javaDouble(func(c *server.Config) *float64 { return &c.ConnThrottle.DropIncrease }),
	"connection_throttle_drop_decrease":         javaDouble(func(c *server.Config) *float64 { return &c.ConnThrottle.DropDecrease }),
	"connection_throttle_decrease_ratio":        javaDouble(func(c *server.Config) *float64 { return &c.ConnThrottle.DecreaseRatio }),
	"connection_throttle_weight_enabled":        propertyBool(func(c *server.Config, b bool) { c.ConnThrottle.WeightEnabled = b }),

	// Netty's TLS guards (server/tls_guard.go): any limit is taken, 0 or less for none.
	"netty.server.outstandingHandshake.limit":          throttleInt(func(c *server.Config) *int { return &c.TLSHandshakeLimit }),
	"netty.server.earlyDropSecureConnectionHandshakes": propertyBool(func(c *server.Config, b bool) { c.EarlyDropSecureHandshakes = b }),
}

// javaInt reads an integer system property as Integer.getInteger does, then sets it.
func javaInt(field func(*server.Config) *int, set func(*server.Config, int) error) func(*server.Config, string) error {
	return func(c *server.Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return notice(fmt.Sprintf("%q is not a number; it stays %d, as in ZooKeeper", v, *field(c)))
		}
		return set(c, int(n))
	}
}

// throttleInt is a connection throttle integer: any value is taken (BlueThrottle
// checks only the weights, as the server does).
func throttleInt(field func(*server.Config) *int) func(*server.Config, string) error {
	return javaInt(field, func(c *server.Config, n int) error { *field(c) = n; return nil })
}

func javaDouble(field func(*server.Config) *float64) func(*server.Config, string) error {
	return func(c *server.Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", v)
		}
		*field(c) = f
		return nil
	}
}

func init() {
	for k, set := range limitKeys {
		registerProperty(k, set)
	}
}
