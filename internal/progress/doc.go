// Package progress shows the progress of Blaze's command-line tools: a bar
// redrawn in place on a terminal, plain lines anywhere else (a log file, a
// pipe), so that no carriage-return frames end up in redirected output.
package progress
