// Command configstore serves the configstore REST API, a small CPS-like
// configuration store for perflab's examples.
//
//	configstore -listen 127.0.0.1:8080 -storage memory|sqlite -db FILE -log FILE
//	            [-preload N -tps M]
//
// -preload builds dataspace "perf", anchor "network" holding
// configstore.GenerateNetwork(N, M) before serving.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/perflab/perflab/examples/configstore"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		log.Fatal(err)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("configstore", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve on")
	storage := fs.String("storage", "memory", "memory or sqlite")
	dbFile := fs.String("db", "configstore.db", "SQLite database file, for -storage sqlite")
	logFile := fs.String("log", "", "file to append a line per request to")
	preload := fs.Int("preload", 0, "devices to generate into dataspace perf, anchor network")
	tps := fs.Int("tps", 4, "termination points per preloaded device")
	if err := fs.Parse(args); err != nil {
		return err
	}

	store, err := open(*storage, *dbFile)
	if err != nil {
		return err
	}
	defer store.Close()
	if *preload > 0 {
		if err := preloadNetwork(store, *preload, *tps); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
	}
	var requestLog io.Writer
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		requestLog = f
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           configstore.NewHandler(store, requestLog),
		ReadHeaderTimeout: 10 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Printf("configstore: %s storage, serving http://%s/api/v1", *storage, ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func open(storage, dbFile string) (*configstore.Store, error) {
	switch storage {
	case "memory":
		return configstore.NewMemory(), nil
	case "sqlite":
		return configstore.OpenSQLite(dbFile)
	}
	return nil, fmt.Errorf("-storage %q: want memory or sqlite", storage)
}

// preloadNetwork puts a generated network into perf/network, creating them
// if needed.
func preloadNetwork(s *configstore.Store, nodes, tps int) error {
	ctx := context.Background()
	if err := s.CreateDataspace(ctx, "perf"); err != nil && !errors.Is(err, configstore.ErrExists) {
		return err
	}
	if err := s.CreateAnchor(ctx, "perf", "network"); err != nil && !errors.Is(err, configstore.ErrExists) {
		return err
	}
	start := time.Now()
	if err := s.ReplaceNode(ctx, "perf", "network", "/", configstore.GenerateNetwork(nodes, tps)); err != nil {
		return err
	}
	log.Printf("configstore: preloaded %d devices with %d termination points each in %v", nodes, tps, time.Since(start).Round(time.Millisecond))
	return nil
}
