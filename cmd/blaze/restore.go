package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/blazeworld/blaze/replica"
)

// restoreCmd is blaze restore s3://BUCKET/PREFIX DIR [-at TIME] (issue 39
// item 3): the world a server shipped to its replica (package replica),
// rebuilt in DIR as of TIME, verified. The object store's endpoint and
// credentials come from the standard AWS environment variables.
func restoreCmd(args []string) int {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	at := fs.String("at", "", "")
	ops, code, ok := parseArgs(fs, args, 2)
	if !ok {
		return code
	}
	var t time.Time
	if *at != "" && *at != "now" {
		var err error
		if t, err = time.Parse(time.RFC3339Nano, *at); err != nil {
			fmt.Fprintf(os.Stderr, "blaze restore: -at %q is not an RFC 3339 time (2026-11-27T04:00:00Z)\n", *at)
			return usageError("restore")
		}
	}
	return runRestore(os.Stdout, ops[0], ops[1], t, replica.EndpointFromEnv())
}

// runRestore restores the replica at url into dir as of at (the newest
// when zero) from the store at ep, printing what it rebuilt on out; it
// returns the exit status.
func runRestore(out io.Writer, url, dir string, at time.Time, ep replica.Endpoint) int {
	store, err := replica.OpenStore(url, ep)
	if err != nil {
		return failed("restore", err)
	}
	r, err := replica.Restore(context.Background(), store, dir, at)
	if err != nil {
		return failed("restore", err)
	}
	regions := ""
	if r.Regions > 0 {
		regions = " and " + count(r.Regions, "region", "regions") + " of a segmented world"
	}
	fmt.Fprintf(out, "%s: restored from %s as of %s: chunks.dat of generation %d (%s, epoch %d)%s from %s; every record verified\n",
		dir, store, r.AsOf.Format(time.RFC3339Nano), r.Generation, size(r.LogBytes), r.Epoch, regions, count(r.Objects, "object", "objects"))
	return exitOK
}

// publishCmd is blaze publish WORLD s3://BUCKET/PREFIX (issue 39): the
// closed world uploaded as an arena template, its content digest printed
// for servers to pull it by (replica.PullTemplate).
func publishCmd(args []string) int {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	ops, code, ok := parseArgs(fs, args, 2)
	if !ok {
		return code
	}
	store, err := replica.OpenStore(ops[1], replica.EndpointFromEnv())
	if err != nil {
		return failed("publish", err)
	}
	digest, err := replica.PublishTemplate(context.Background(), store, ops[0])
	if err != nil {
		return failed("publish", err)
	}
	fmt.Println(digest)
	return exitOK
}

// replicaCmd is blaze replica points s3://BUCKET/PREFIX, the times a
// restore of the replica can be asked for, oldest first, and blaze replica
// prune s3://BUCKET/PREFIX -before TIME, which deletes what no restore at
// TIME or later reads (issue 39).
func replicaCmd(args []string) int {
	fs := flag.NewFlagSet("replica", flag.ContinueOnError)
	before := fs.String("before", "", "")
	ops, code, ok := parseArgs(fs, args, -1)
	if !ok {
		return code
	}
	switch {
	case len(ops) == 2 && ops[0] == "points" && *before == "":
		return runReplicaPoints(os.Stdout, ops[1], replica.EndpointFromEnv())
	case len(ops) == 2 && ops[0] == "prune" && *before != "":
		t, err := time.Parse(time.RFC3339Nano, *before)
		if err != nil {
			fmt.Fprintf(os.Stderr, "blaze replica prune: -before %q is not an RFC 3339 time (2026-11-27T04:00:00Z)\n", *before)
			break
		}
		return runReplicaPrune(os.Stdout, ops[1], t, replica.EndpointFromEnv())
	}
	return usageError("replica")
}

// runReplicaPrune deletes the objects of the replica at url that no
// restore at horizon or later reads (replica.Prune), printing how many.
func runReplicaPrune(out io.Writer, url string, horizon time.Time, ep replica.Endpoint) int {
	store, err := replica.OpenStore(url, ep)
	if err != nil {
		return failed("replica prune", err)
	}
	n, err := replica.Prune(context.Background(), store, horizon)
	if err != nil {
		return failed("replica prune", err)
	}
	fmt.Fprintf(out, "%s: %s deleted; a restore from %s on reads none of them\n", store, count(n, "object", "objects"), horizon.Format(time.RFC3339Nano))
	return exitOK
}

// runReplicaPoints prints the points in time of the replica at url, one a
// line: the time (for restore's -at), the writer's epoch and what was
// shipped then.
func runReplicaPoints(out io.Writer, url string, ep replica.Endpoint) int {
	store, err := replica.OpenStore(url, ep)
	if err != nil {
		return failed("replica points", err)
	}
	points, err := replica.Points(context.Background(), store)
	if err != nil {
		return failed("replica points", err)
	}
	for _, p := range points {
		whole := ""
		if p.Whole > 0 {
			whole = ", " + count(p.Whole, "whole copy", "whole copies")
		}
		fmt.Fprintf(out, "%s  epoch %d  %s of log%s, %s\n", p.Time.Format(time.RFC3339Nano), p.Epoch, size(p.LogBytes), whole, count(p.Objects, "object", "objects"))
	}
	return exitOK
}
