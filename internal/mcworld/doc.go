// Package mcworld reads and writes .mcworld files, the zip archives
// Bedrock exports worlds as.
package mcworld
