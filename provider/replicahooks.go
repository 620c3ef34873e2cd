package provider

import "path/filepath"

// EngineDir is the directory inside a world that holds its engine's
// files (chunks.dat, index.dat): what package replica ships and restores.
const EngineDir = engineDir

// RenewEdition gives the closed world in dir a new edition (see Edition):
// for a copy of a world's files made outside Backup, such as a restore from
// its replica, whose columns are not those the original's edition names.
func RenewEdition(dir string, conf Config) error {
	return renewEdition(filepath.Join(dir, engineDir), conf.engineOptions())
}
