// Command outpost is Outpost's control plane: the HTTP API and runner
// gateway (`api`), the Temporal worker (`worker`), database migrations
// (`migrate`), org bootstrap (`org create`), a Temporal server of its own
// (`temporal`), and `dev`, everything in one process on an embedded
// Temporal server and SQLite.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `outpost — the Outpost control plane

Usage:
  outpost dev      [flags]   everything in one process: embedded Temporal (+ UI), SQLite, API, gateway, worker, runners
  outpost api      [flags]   the control API (/v1), the runner gateway (/runner/v1) and the vendor registry
  outpost worker   [flags]   the Temporal worker
  outpost temporal [flags]   a Temporal server (+ UI) on its own, its state in <data-dir>/temporal (SQLite)
  outpost migrate  [flags]   apply database migrations
  outpost kek      generate|init|status|rotate  the key-encryption key of secrets at rest
  outpost signing-key list|rotate|retire        the registry's signing keys, one set per org
  outpost org create NAME    create an org and print its first API token
  outpost runner publish -version V -file PATH -signing-key KEY   push a signed runner binary into the vendor registry (self-update)
  outpost runner keygen -out KEY                 make a release key
  outpost demo     [flags]   set up dev's demo org, app and install on a running control plane, start its provision
  outpost proxy    [flags]   forward TCP ports to (every replica of) a host, as a load balancer does
  outpost probe    URL...    exit 0 when each http(s) URL answers 2xx and each tcp://HOST:PORT accepts
  outpost version

Every flag can also be set in the environment: -gateway-url is OUTPOST_GATEWAY_URL,
-data-dir OUTPOST_DATA_DIR (default .outpost), and so on; the command line wins.
Run as many api and worker processes as you like against one PostgreSQL database and one
Temporal server (outpost temporal, or a Temporal cluster); api processes that serve the vendor
registry share its directory (see docs/architecture/replicas.md).
DATABASE_URL, TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE are read when their OUTPOST_
variables are unset. Run 'outpost <command> -h' for a command's flags and variables.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var err error
	args := os.Args[2:]
	switch os.Args[1] {
	case "dev":
		err = runDev(ctx, args, log)
	case "api":
		err = runAPI(ctx, args, log)
	case "worker":
		err = runWorker(ctx, args, log)
	case "temporal":
		err = runTemporal(ctx, args, log)
	case "migrate":
		err = runMigrate(ctx, args, log)
	case "org":
		err = runOrg(ctx, args, log)
	case "kek":
		err = runKEK(ctx, args, log)
	case "signing-key":
		err = runSigningKey(ctx, args, log)
	case "runner":
		err = runRunner(ctx, args, log)
	case "demo":
		err = runDemo(ctx, args, log)
	case "proxy":
		err = runProxy(ctx, args, log)
	case "probe":
		err = runProbe(ctx, args, log)
	case "version":
		err = groupHelp(args, "usage: outpost version\n  print this binary's version")
		if err == nil {
			fmt.Println(version)
		}
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "outpost: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "outpost %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
