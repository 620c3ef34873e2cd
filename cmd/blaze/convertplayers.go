package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/provider"
)

// runConvertPlayers moves the players' data between Dragonfly's playerdb
// folder and a Blaze world (provider.DB.Players), the direction read from
// src: a Blaze world is exported into a new playerdb folder dst, anything
// else is taken for a playerdb folder and imported into the Blaze world
// dst. It returns the exit status: 0 when every record was copied, 2 when
// some could not be read, 1 when the conversion stopped.
func runConvertPlayers(src, dst string) int {
	log := slog.New(slog.DiscardHandler)
	var (
		n      int
		failed []convert.PlayerDataFailure
		err    error
	)
	if _, serr := os.Stat(filepath.Join(src, "blaze")); serr == nil {
		var db *provider.DB
		if db, err = (provider.Config{Log: log, ReadOnly: true}).Open(src); err == nil {
			n, failed, err = convert.ExportPlayerDB(db, dst)
			err = errors.Join(err, db.Close())
		}
	} else {
		if _, serr := os.Stat(filepath.Join(dst, "blaze")); serr != nil {
			err = fmt.Errorf("%s is not a Blaze world to import the players of %s into (one of the two must be a Blaze world): %w", dst, src, serr)
		} else {
			var db *provider.DB
			if db, err = (provider.Config{Log: log}).Open(dst); err == nil {
				n, failed, err = convert.ImportPlayerDB(db, src)
				err = errors.Join(err, db.Close())
			}
		}
	}
	if err == nil || n > 0 {
		fmt.Printf("%s -> %s: %d players' data copied\n", src, dst, n)
	}
	for _, f := range failed {
		fmt.Println("could not read", f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "blaze convert:", err)
		return 1
	}
	if len(failed) > 0 {
		return 2
	}
	return 0
}
