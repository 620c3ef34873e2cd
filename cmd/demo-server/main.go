package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/demo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo-server:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "0.0.0.0:19132", "address to listen on (UDP)")
	dir := flag.String("world", "build/demo-world", "world directory (created if missing)")
	mode := flag.String("durability", "balanced", "fast, balanced, safe or safebatch (see README)")
	var compression blazedb.Compression
	flag.TextVar(&compression, "compression", blazedb.CompressionLZ4, "codec of new column data: lz4, zstd (smaller, slower to write), snappy or none")
	offline := flag.Bool("offline", false, "turn Xbox Live authentication off (for local testing)")
	importFrom := flag.String("import", "", "an .mcworld file to convert into -world when -world does not exist yet")
	arena := flag.String("arena", "", "arena mode: a Blaze world to use read-only as the map, or a template published with blaze publish, s3://BUCKET/PREFIX@DIGEST, pulled by digest into a local cache; -world then holds the match's changes, forgotten at every start")
	backupDir := flag.String("backup", "", "a directory to back the running world up into (each backup a world of its own)")
	backupEvery := flag.Duration("backup-every", time.Hour, "how often to back up, with -backup")
	backupKeep := flag.Int("backup-keep", 5, "how many backups to keep, with -backup (the oldest are deleted)")
	metricsAddr := flag.String("metrics", "", "a TCP address to serve Prometheus' /metrics and a map of the world (/) on, e.g. 127.0.0.1:9100")
	replicaURL := flag.String("replica", "", "s3://BUCKET/PREFIX: ship the world there as it is written (endpoint and credentials from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION); blaze restore rebuilds it")
	ops := flag.String("ops", "", "comma-separated names of the players allowed /snapshot and /rollback")
	flag.Parse()

	durability, err := blazedb.ParseDurability(*mode)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r, err := demo.Config{Addr: *addr, Dir: *dir, Durability: durability, Compression: compression, Offline: *offline, Import: *importFrom, ArenaTemplate: *arena,
		BackupDir: *backupDir, BackupEvery: *backupEvery, BackupKeep: *backupKeep, Metrics: *metricsAddr, Replica: *replicaURL,
		Operators: strings.FieldsFunc(*ops, func(r rune) bool { return r == ',' }), Log: log}.New()
	if err != nil {
		return err
	}
	r.CloseOnProgramEnd() // on SIGINT/SIGTERM: a last checkpoint, then save every world and close Blaze
	return r.Serve()
}
