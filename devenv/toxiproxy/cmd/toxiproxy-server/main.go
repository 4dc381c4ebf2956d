// Command toxiproxy-server runs Shopify's toxiproxy API server (a TCP proxy with injectable
// network faults) for the tests: the module's own cmd/server without config files or metrics.
package main

import (
	"flag"
	"os"
	"os/signal"
	"syscall"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address for the API to listen on")
	port := flag.String("port", "8474", "port for the API to listen on")
	flag.Parse()

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		os.Exit(0)
	}()

	logger := zerolog.New(os.Stdout).With().Timestamp().Logger()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	server.Listen(*host, *port)
}
