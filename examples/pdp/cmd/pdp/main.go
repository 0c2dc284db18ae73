// Command pdp runs the sample rules engine of examples/pdp.
//
//	go run ./examples/pdp/cmd/pdp -bus kafka://127.0.0.1:9092 -aai http://127.0.0.1:8091 -audit audit.log
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/perflab/perflab/bus"
	_ "github.com/perflab/perflab/bus/kafka"
	_ "github.com/perflab/perflab/bus/nats"
	"github.com/perflab/perflab/examples/pdp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8090", "REST address")
	busURL := flag.String("bus", "kafka://127.0.0.1:9092", "message bus (kafka://... or nats://...)")
	aai := flag.String("aai", "http://127.0.0.1:8091", "A&AI base URL")
	audit := flag.String("audit", "audit.log", "audit log file (appended)")
	workers := flag.Int("workers", 10, "events processed at once")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *busURL, *aai, *audit, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "pdp:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, listen, busURL, aai, audit string, workers int) error {
	conn, err := bus.Dial(ctx, busURL)
	if err != nil {
		return err
	}
	defer conn.Close()
	if tc, ok := conn.(interface {
		CreateTopic(context.Context, string, int32) error
	}); ok {
		for _, t := range []string{pdp.TopicAPPCRequest, pdp.TopicAPPCResponse, pdp.TopicCompletion} {
			if err := tc.CreateTopic(ctx, t, 1); err != nil {
				return err
			}
		}
	}
	f, err := os.OpenFile(audit, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := pdp.Start(ctx, pdp.Config{Listen: listen, Bus: conn, AAI: aai, Audit: f, Workers: workers})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "pdp: serving %s; bus %s; A&AI %s; audit %s\n", s.URL(), busURL, aai, audit)
	<-ctx.Done()
	return s.Close()
}
