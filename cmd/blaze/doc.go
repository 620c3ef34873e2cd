// Command blaze is Blaze's tool for server owners.
//
//	blaze convert [-compression C] SRC DST
//
// copies the world in SRC to DST: a LevelDB (Dragonfly mcdb or Bedrock)
// world, or an .mcworld file, becomes a Blaze world and a Blaze world a
// LevelDB one, zipped when DST ends in .mcworld (convert.go). See package
// internal/convert for what it promises.
//
//	blaze check [-q] DIR
//
// verifies the Blaze world in DIR without writing to it (package
// internal/worldcheck), and
//
//	blaze compact [-q] [-recompress [-compression C]] [-archive | -unpack] DIR
//
// rewrites its chunks.dat without the garbage that overwritten columns
// leave, packing column data (in zstd's best with -archive; -unpack
// undoes packing), bringing it to one codec with -recompress, and
//
//	blaze repair [-q] DIR
//
// mends the damage check finds (provider.Config.Repair), and
//
//	blaze info [-template T] DIR
//
// prints what the world (or arena overlay) holds, where, and how much of
// its logs compaction would drop, without writing to it, and
//
//	blaze render [-dim D] [-at POINT] [-template T] DIR OUT.png
//
// draws a top-down map of it (package internal/worldmap), as it is or as
// it was at a point of its history, or of an arena overlay with the
// chunks its match changed outlined (render.go), and
//
//	blaze snapshot create|list|delete WORLD [NAME]
//	blaze changes WORLD -since POINT
//	blaze rollback WORLD -to POINT [-area X1,Z1,X2,Z2] [-dim DIM]
//
// name, inspect and go back to points of the world's history (history.go),
// and
//
//	blaze export WORLD -at POINT -area X1,Z1,X2,Z2 [-dim DIM] [-y Y1,Y2] OUT.mcstructure
//	blaze import WORLD IN.mcstructure -at X,Y,Z [-dim DIM]
//
// copy an area, as it was at a point, to a Bedrock structure file and
// paste one into a world (structure.go), and
//
//	blaze restore s3://BUCKET/PREFIX DIR [-at TIME]
//	blaze replica points s3://BUCKET/PREFIX
//	blaze replica prune s3://BUCKET/PREFIX -before TIME
//	blaze publish WORLD s3://BUCKET/PREFIX
//
// rebuild a world from its replica in object storage, list the times it
// can be rebuilt as of, delete what no restore from a time on reads, and
// publish a world as an arena template by
// content digest (package replica).
// None of them runs while a server has the world open.
//
//	blaze version
//	blaze help [COMMAND]
//
// print the build's version and the usage (blaze COMMAND -h prints one
// command's). Every command takes its flags before, between or after its
// operands (parseArgs); the usage lists the exit statuses. convert, check,
// compact and repair show every phase's progress on stderr, drawn on a
// terminal and as plain lines otherwise (package internal/progress); -q
// hides it.
package main
