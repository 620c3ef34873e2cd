// Package morton maps signed 2D chunk coordinates to Z-order (Morton) codes,
// so that sorting by code keeps nearby chunks near each other on disk and in
// the index.
package morton
