// Command demo-server runs a Dragonfly server whose worlds are stored by
// Blaze. `make run` starts it on a default world: imported on first start
// from a real Bedrock world in ../shared/testdata/worlds when there is one,
// otherwise generated (flat) as players explore.
//
//	go run ./cmd/demo-server [-addr 0.0.0.0:19132] [-world build/demo-world]
//	                         [-durability balanced] [-offline] [-import w.mcworld]
//	                         [-arena TEMPLATE_DIR]
//	                         [-backup DIR [-backup-every 1h] [-backup-keep 5]]
//	                         [-metrics 127.0.0.1:9100]
//
// With -metrics it serves Prometheus' text format at /metrics on that TCP
// address: Blaze's figures, read at each scrape (package metrics), and the
// Go runtime's and the process's; and at / a page with a map of the
// overworld (in arena mode, the template's with the match's changes
// outlined).
//
// With -backup it copies the running world into DIR at every -backup-every
// while players play, each copy a world of its own (provider.DB.Backup)
// with the players' data, and keeps the newest -backup-keep, deleting no
// entry of DIR not named as its backups are; one that fails is logged, and
// makes the server exit non-zero when it stops.
//
// It saves everything and closes cleanly on SIGINT or SIGTERM. A world
// directory it cannot use (a LevelDB world, damaged files, another server
// holding it, both a LevelDB and a Blaze world in it) is reported with a
// non-zero exit, and nothing is written to it; so is an address it cannot
// listen on, after the world is closed cleanly.
package main
