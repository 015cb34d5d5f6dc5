// sniserver: a crypto/tls server for tls_differential_test.sh. It logs,
// one line each, the server name of every ClientHello it acts on
// ("hello NAME", before it answers) and of every handshake it completes
// ("done NAME"); "-" stands for no name. Standard library only: the test
// builds it offline.
//
//	sniserver -listen ADDR -cert FILE -key FILE -log FILE -ready FILE
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"sync"
	"time"
)

func main() {
	listen := flag.String("listen", "", "address:port")
	certFile := flag.String("cert", "", "certificate (PEM)")
	keyFile := flag.String("key", "", "key (PEM)")
	logFile := flag.String("log", "", "log file")
	ready := flag.String("ready", "", "file written once listening")
	flag.Parse()

	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatal(err)
	}
	out, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	say := func(what, name string) {
		if name == "" {
			name = "-"
		}
		mu.Lock()
		fmt.Fprintf(out, "%s %s\n", what, name)
		out.Sync()
		mu.Unlock()
	}
	conf := &tls.Config{
		Certificates: []tls.Certificate{cert},
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			say("hello", h.ServerName)
			return nil, nil
		},
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*ready, []byte("ok\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go func(c net.Conn) {
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			t := tls.Server(c, conf)
			if err := t.Handshake(); err != nil {
				return
			}
			say("done", t.ConnectionState().ServerName)
			// Answer one read, so the client sees the tunnel carry data.
			buf := make([]byte, 512)
			if n, err := t.Read(buf); err == nil && n > 0 {
				t.Write([]byte("hello from go\n"))
			}
		}(c)
	}
}
