package jute

// Connect is the session handshake a client sends first. Clients since 3.4 append a
// readOnly byte (a 45-byte request with a 16-byte password, 44 bytes without the flag);
// HasReadOnly records whether it was there so the reply can mirror it.
type Connect struct {
	ConnectRequest
	ReadOnly    bool
	HasReadOnly bool
}

// Decode reads the request and the optional trailing readOnly flag.
func (c *Connect) Decode(d *Decoder) {
	c.ConnectRequest.Decode(d)
	if d.Err == nil && d.Remaining() > 0 {
		c.HasReadOnly = true
		c.ReadOnly = d.Bool()
	}
}

// Encode writes the request and, if HasReadOnly, the flag.
func (c *Connect) Encode(e *Encoder) {
	c.ConnectRequest.Encode(e)
	if c.HasReadOnly {
		e.Bool(c.ReadOnly)
	}
}

// Connected is the server's answer to Connect. An old client that did not send the
// readOnly flag does not get it back either.
type Connected struct {
	ConnectResponse
	ReadOnly    bool
	HasReadOnly bool
}

// Encode writes the response and, if HasReadOnly, the flag.
func (c *Connected) Encode(e *Encoder) {
	c.ConnectResponse.Encode(e)
	if c.HasReadOnly {
		e.Bool(c.ReadOnly)
	}
}

// Decode reads the response and the optional flag.
func (c *Connected) Decode(d *Decoder) {
	c.ConnectResponse.Decode(d)
	if d.Err == nil && d.Remaining() > 0 {
		c.HasReadOnly = true
		c.ReadOnly = d.Bool()
	}
}
