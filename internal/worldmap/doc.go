// Package worldmap draws a top-down map of a Blaze world: one pixel per
// block column, in the colour of its highest block, shaded by height as a
// Minecraft map is, with a line where one database's columns meet
// another's (the regions of a segmented world). The Nether is drawn below
// its roof. It reads columns as a server does, through LoadColumn.
//
// A Map is not safe for concurrent use.
package worldmap
