package datatree

import "testing"

// TestDigesterMatchesZooKeeper: digest ids of "user:pass" and "ü:pä" as ZooKeeper
// 3.8.0's DigestAuthenticationProvider.generateDigest printed them on Java 17 with
// -Dzookeeper.DigestAuthenticationProvider.digestAlg set to each name.
func TestDigesterMatchesZooKeeper(t *testing.T) {
	cases := []struct{ alg, user, umlaut string }{
		{"", "user:smGaoVKd/cQkjm7b88GyorAUz20=", "ü:YaU0sS5YxKHLhFsvFFTao+h/xQ8="},
		{"SHA1", "user:smGaoVKd/cQkjm7b88GyorAUz20=", "ü:YaU0sS5YxKHLhFsvFFTao+h/xQ8="},
		{"1.3.14.3.2.26", "user:smGaoVKd/cQkjm7b88GyorAUz20=", "ü:YaU0sS5YxKHLhFsvFFTao+h/xQ8="},
		{"sha-256", "user:70yRTFkWmLJo2zxkFj6v2nIJpjDyNuvw7r8EVGDfcjo=", "ü:ILJYTmEPt3kXVkjdfJOCvkvstO76itLzAqygrpfiV0g="},
		{"OID.2.16.840.1.101.3.4.2.1", "user:70yRTFkWmLJo2zxkFj6v2nIJpjDyNuvw7r8EVGDfcjo=", "ü:ILJYTmEPt3kXVkjdfJOCvkvstO76itLzAqygrpfiV0g="},
		{"SHA224", "user:PkKzWnuMzJ0rpktz4O5hvSZFw/3yZFIfOizv2Q==", "ü:rAhJBMS0zPuzBeE0HF6rL9wp/vtVaYotSCO16Q=="},
		{"SHA-384", "user:HCMIuQnSVR4Ge6EqefZYDR5jDoZgKCFDqLIj+NFPNcMCWoRCnlIHxYGRib8lxoES", "ü:fFLunYzdhAtQPijfG2L5BlMBtX+clZK8gZeSn+IaC92CvVRLpiumQrasF8/9qQKg"},
		{"SHA-512", "user:byB8hNs+LzOYofjeMGiIfR/jKrcms8i5ls17owJgMPc/97CxZ1nTVHmKawnszYHC8bu9VMh6GIu6lFZ1BXBL3Q==", "ü:x3t/PRUBJ2tW0UknWYH4fHwuDEkRl2hutia/+Tn/d8qPxXIZ2Rg2JxWU032QN8Vt/ZmpswsIKiGI3TziDJwxDQ=="},
		{"SHA-512/224", "user:L1glB9gK73x7aeL8CvbDYSbBR0KA0VVYa4N+Qg==", "ü:dOs3QxRDRU+Gh7xPoJvzHW9ufV8HweyV8VkHmw=="},
		{"SHA512/256", "user:htaDe+W52JZuBc/SaAa/Dg0Gkh4PRC+urDUOsga/86s=", "ü:k7jRyI+dBmH7ADRd0zC7/M/511KJdfY+Rg8So+tAxX4="},
		{"SHA3-224", "user:V0DUUIgATD5glpGlu3E/zUW5JQct3OS4WSPfcA==", "ü:p6JMOGLU2nxsZqvu4+cER4bvu25DYwcyRObyUg=="},
		{"SHA3-256", "user:MKfo05p7nYw1Yb/bzA4GEyZLUt02iFpxN0ASiDBnsjw=", "ü:I+lsIwJ/MdD+SiSYELjlfPlvTbgYsO3Z9nwsLVct8ig="},
		{"sha3-384", "user:tJjZMH1SIBQQtXUh+Rc24S0RVOcCO9mLplyYFS9vdFluhH2azpF4eDdC1BnT7QVl", "ü:7cgb7otxlsAHIVWLdZKc3ASqDzSM81UtLUXjPWq9RjGBu+hfb1PsBc7rR48okqvH"},
		{"SHA3-512", "user:FWUrHsnpIuI/wA7/wScJDJ8ZlRBU2B3y7nG9wKifhaEpJvvEuDgXE5mhpNHdcvZzjwkNue7X1em4rs5s2IiDdw==", "ü:ZitB/mUfZceLHBouI8OE3IB5I3EYfAC1gX8ZTzfrRpbzOTw4BR2EL/1WHp6pPyi+C8FJyW42AppVN/bN7FYYUA=="},
		{"MD5", "user:IaOShYhKJo1kWOP96wi+rA==", "ü:/ToCaRGIzvZWsxOass6Qmg=="},
	}
	for _, c := range cases {
		d, err := NewDigester(c.alg)
		if err != nil {
			t.Errorf("%q: %v", c.alg, err)
			continue
		}
		if got := d("user:pass"); got != c.user {
			t.Errorf("%q: user:pass gives %q, want %q", c.alg, got, c.user)
		}
		if got := d("ü:pä"); got != c.umlaut {
			t.Errorf("%q: ü:pä gives %q, want %q", c.alg, got, c.umlaut)
		}
	}
	// Java has no such algorithm (RipeMD160 needs an extra provider; " SHA1" is not
	// trimmed); MD2 is Java's but not Go's.
	for _, alg := range []string{"RipeMD160", "SHA-2", " SHA1", "MD2"} {
		if _, err := NewDigester(alg); err == nil {
			t.Errorf("%q accepted", alg)
		}
	}
}
