//go:build unix

package s3test

import "syscall"

// Pause stops the server's process (SIGSTOP) without closing its
// connections: requests under way hang until Resume, as with a store that
// stopped answering.
func (s *Server) Pause() {
	s.tb.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		s.tb.Fatal(err)
	}
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() {
	s.tb.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		s.tb.Fatal(err)
	}
}
