// Package demo builds the Dragonfly server of cmd/demo-server: Dragonfly's
// defaults with Blaze as the world provider. The end-to-end test starts the
// same server.
package demo
