// Package colcmp compares chunk columns exactly: block by block in every
// layer, biome by biome, and the rest by deep equality. The converter uses it
// to verify what it wrote; the tests use it to prove fidelity.
package colcmp
