package convert

import "errors"

var (
	// ErrDestinationNotEmpty: the destination exists and holds files.
	ErrDestinationNotEmpty = errors.New("convert: destination is not empty")
	// ErrUnknownSource: the source is neither a LevelDB nor a Blaze world.
	ErrUnknownSource = errors.New("convert: source is not a LevelDB or Blaze world")
	// ErrAmbiguousWorld: the directory holds both a LevelDB world (db/) and
	// a Blaze world (blaze/), so which one is meant is unclear.
	ErrAmbiguousWorld = errors.New("convert: directory holds both a LevelDB and a Blaze world")
	// ErrDestinationInSource: the destination is the source or lies inside
	// it, where the new world would become part of the one it copies.
	ErrDestinationInSource = errors.New("convert: destination is inside the source")
	// ErrSourceInBuildDir: the source is, or lies inside, the directory
	// the conversion builds in (the destination's name and BuildSuffix),
	// which a conversion deletes as the leftover of one cut short.
	ErrSourceInBuildDir = errors.New("convert: source is inside the directory the conversion builds in")
	// ErrUnreadable: reading a column or a player's spawn made the
	// source's reader panic, as Dragonfly's LevelDB provider does on some
	// damaged data, or a column's record declares a length longer than
	// its bytes could hold, which that reader would allocate, or nests NBT
	// deeper than 512 (palettecheck.go).
	ErrUnreadable = errors.New("convert: unreadable")
)
