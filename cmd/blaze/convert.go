package main

import (
	"fmt"
	"os"

	"github.com/blazeworld/blaze/internal/convert"
)

// runConvert converts src to dst and prints a summary; it returns the exit
// status: 0 when everything was converted, 2 when some columns, player
// spawns or LevelDB records could not be read or carried, 1 when the
// conversion stopped.
func runConvert(src, dst string, quiet bool) int {
	var o convert.Options
	if !quiet {
		o.Progress = os.Stderr
	}
	r, err := convert.Convert(src, dst, o)
	if r != nil {
		if r.Leftover != "" {
			fmt.Printf("deleted %s, which a conversion cut short had left\n", r.Leftover)
		}
		fmt.Printf("%s -> %s: %d columns and %d player spawns copied and verified in %v\n",
			r.From, r.To, r.Columns, r.Players, r.Took.Round(1e6))
		if n := r.ColumnRecords + r.WorldRecords; n > 0 {
			fmt.Printf("%d LevelDB records Blaze does not read carried: %d with columns, %d of the world\n", n, r.ColumnRecords, r.WorldRecords)
		}
		for _, f := range r.FailedRecords {
			fmt.Println("could not carry", f)
		}
		if r.To == "leveldb" {
			fmt.Println("note: LevelDB keeps each entity's UniqueID equal to its ID, and the scheduled-update tick only with scheduled updates")
		}
		for _, f := range r.Failed {
			fmt.Println("could not read", f)
		}
		for _, f := range r.FailedPlayers {
			fmt.Println("could not read", f)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "blaze convert:", err)
		return 1
	}
	if len(r.Failed) > 0 || len(r.FailedPlayers) > 0 || len(r.FailedRecords) > 0 {
		return 2
	}
	return 0
}
