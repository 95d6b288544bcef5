// Command echoserver is the Go twin of hoare's echo_server
// (benches/programs/echo_server.rs): a goroutine per connection reads what
// comes (up to 1 KiB at a time) and writes it back until the client closes.
// benches/echo.sh runs both against the same client (echo_client).
//
// Prints "listening ADDR" once bound, then serves until killed.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	"hoarebench/internal/benchutil"
)

func serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 1024)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func main() {
	workersF := benchutil.WorkersFlag()
	port := flag.Int("port", 0, "TCP port on 127.0.0.1 (0: any)")
	flag.Parse()
	benchutil.SetWorkers(*workersF)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		benchutil.Fail("%v", err)
	}
	fmt.Printf("listening %s\n", l.Addr())
	os.Stdout.Sync()
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "echoserver: accept:", err)
			continue
		}
		go serve(c)
	}
}
