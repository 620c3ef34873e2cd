//go:build !unix

package s3test

// Pause skips the test: a process cannot be stopped here.
func (s *Server) Pause() { s.tb.Skip("s3test: cannot pause a process on this platform") }

// Resume does nothing here.
func (s *Server) Resume() {}
