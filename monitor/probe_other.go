//go:build !linux

package monitor

import "net"

func newRawIO(c net.Conn) (byteIO, error) { return connIO{c}, nil }
