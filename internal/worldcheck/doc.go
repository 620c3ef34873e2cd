// Package worldcheck verifies a Blaze world offline, as `blaze check` does,
// each of its databases in turn (a segmented world has one for each region
// besides its own): what
// opening it found (a torn tail, damaged stretches skipped, whether
// index.dat was usable), the engine's own check (the index against a scan
// of the log, every live record's checksums), and then every column and
// player spawn read back through the provider, as a server would read
// them. It lists every column that cannot be read instead of stopping at
// the first, and never writes to the world. Checks of different worlds may
// run at once; the report is a plain value.
package worldcheck
