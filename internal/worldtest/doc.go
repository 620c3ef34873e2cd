// Package worldtest holds helpers shared by Blaze's tests: the real Bedrock
// worlds in ../shared/testdata/worlds, reading them with Dragonfly's mcdb,
// and comparing columns exactly.
package worldtest
