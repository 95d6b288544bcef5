// Command netpingpong is the Go twin of hoare's net_channels benchmark
// (benches/programs/net_channels.rs) with one channel: a TCP ping-pong between
// two Go programs with hoare's framing. The client sends each value as a DATA
// frame (channel id u32 LE, kind u8, flags u8, length u32 LE, then the value
// as a postcard varint) and waits for the server's ACK frame (a bare header)
// before sending the next: the round trip of a network rendezvous.
//
//	netpingpong -role server            # prints "listening ADDR", serves until killed
//	netpingpong -role client -addr ADDR -values 100000
//
// Last line: bench=net_pingpong values=N ns_per_value=X values_per_s=Y
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

const (
	header   = 10
	kindData = 4
	kindAck  = 5
	flagLast = 1
)

func serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	h := make([]byte, header)
	payload := make([]byte, 64*1024)
	ack := make([]byte, header)
	for {
		if _, err := io.ReadFull(r, h); err != nil {
			return
		}
		n := binary.LittleEndian.Uint32(h[6:10])
		if n > uint32(len(payload)) || h[4] != kindData {
			return
		}
		if _, err := io.ReadFull(r, payload[:n]); err != nil {
			return
		}
		// Decode the value, as hoare's reader does.
		if _, k := binary.Uvarint(payload[:n]); k <= 0 {
			return
		}
		copy(ack[0:4], h[0:4])
		ack[4] = kindAck
		if _, err := c.Write(ack); err != nil {
			return
		}
	}
}

func main() {
	role := flag.String("role", "client", "server or client")
	addr := flag.String("addr", "", "the server's address (client)")
	values := flag.Int("values", 100000, "values to send (client)")
	flag.Parse()
	if *role == "server" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("listening", l.Addr())
		for {
			c, err := l.Accept()
			if err != nil {
				continue
			}
			go serve(c)
		}
	}
	c, err := net.Dial("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	frame := make([]byte, header+binary.MaxVarintLen64)
	ack := make([]byte, header)
	send := func(v uint64) {
		n := binary.PutUvarint(frame[header:], v)
		binary.LittleEndian.PutUint32(frame[0:4], 1)
		frame[4] = kindData
		frame[5] = flagLast
		binary.LittleEndian.PutUint32(frame[6:10], uint32(n))
		if _, err := c.Write(frame[:header+n]); err != nil {
			panic(err)
		}
		if _, err := io.ReadFull(c, ack); err != nil {
			panic(err)
		}
	}
	send(0)
	start := time.Now()
	for i := 0; i < *values; i++ {
		send(uint64(i))
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("bench=net_pingpong values=%d ns_per_value=%.0f values_per_s=%.0f\n",
		*values, secs*1e9/float64(*values), float64(*values)/secs)
}
