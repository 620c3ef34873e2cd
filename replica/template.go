package replica

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
)

// An arena template is published once, by content digest, and pulled by
// any server into a local cache, verified, to serve read-only under its
// arenas' overlays (issue 39). Its objects, under the replica's prefix:
//
//	+-------------------------------+--------------------------------------+
//	| name                          | contents                             |
//	+-------------------------------+--------------------------------------+
//	| template/DIGEST/files.json    | the template manifest (below); its   |
//	|                               | SHA-256, in hex, is DIGEST           |
//	| template/DIGEST/f/PATH        | the world's file PATH (level.dat,    |
//	|                               | blaze/chunks.dat, ...), whole        |
//	+-------------------------------+--------------------------------------+
//
// The template manifest, a JSON object: signature "blaze-template",
// version 1, files: [{path, size, sha256}] sorted by path, every regular
// file of the world but its LOCK files. Written last, and only if absent
// (If-None-Match: *): a template is whole once it appears, and never
// changes. Part of the in-bucket format.
const (
	templateDir       = "template/"
	templateManifest  = "files.json"
	templateSignature = "blaze-template"
	templateVersion   = 1
)

type templateFiles struct {
	Signature string         `json:"signature"`
	Version   int            `json:"version"`
	Files     []templateFile `json:"files"`
}

type templateFile struct {
	Path   string `json:"path"` // slash-separated, relative to the world
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// PublishTemplate uploads the closed plain world in dir as a template and
// returns its digest. It holds the world open read-only meanwhile, so a
// server writing it makes it fail (blazedb.ErrLocked). Publishing the same
// world again uploads it again and returns the same digest.
func PublishTemplate(ctx context.Context, store *Store, dir string) (string, error) {
	if regions, err := segment.Regions(dir); err != nil || len(regions) > 0 {
		return "", errors.Join(err, fmt.Errorf("replica: publish %s: a segmented world cannot be a template yet", dir))
	}
	db, err := provider.Config{Log: quiet, ReadOnly: true, ExternalMaintenance: true}.Open(dir)
	if err != nil {
		return "", fmt.Errorf("replica: publish %s: %w", dir, err)
	}
	defer db.Close()
	var files []templateFile
	contents := map[string][]byte{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "LOCK" {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel = filepath.ToSlash(rel)
		files = append(files, templateFile{Path: rel, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
		contents[rel] = b
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("replica: publish %s: %w", dir, err)
	}
	slices.SortFunc(files, func(a, b templateFile) int { return strings.Compare(a.Path, b.Path) })
	man, _ := json.MarshalIndent(templateFiles{Signature: templateSignature, Version: templateVersion, Files: files}, "", "\t")
	sum := sha256.Sum256(man)
	digest := hex.EncodeToString(sum[:])
	base := templateDir + digest + "/"
	for _, f := range files {
		b := contents[f.Path]
		if _, err := store.put(ctx, base+"f/"+f.Path, bytes.NewReader(b), int64(len(b)), condition{}); err != nil {
			return "", err
		}
	}
	_, err = store.put(ctx, base+templateManifest, bytes.NewReader(man), int64(len(man)), condition{absent: true})
	if err != nil && !errors.Is(err, errPrecondition) { // published before: the same bytes
		return "", err
	}
	return digest, nil
}

// PullTemplate returns the directory in cache holding the template of that
// digest, downloading it first when it is not there: every file is checked
// against the manifest, whose own digest must be the one asked for, and
// the world is verified (every record's checksums) before the directory
// appears. Open it read-only (provider.Config{ReadOnly: true}) as the
// template of an overlay; every arena of a server may share it.
func PullTemplate(ctx context.Context, store *Store, digest, cache string) (string, error) {
	if len(digest) != 2*sha256.Size || strings.ToLower(digest) != digest {
		return "", fmt.Errorf("%w: template digest %q is not %d lowercase hexadecimal digits", ErrBadURL, digest, 2*sha256.Size)
	}
	if _, err := hex.DecodeString(digest); err != nil {
		return "", fmt.Errorf("%w: template digest %q: %v", ErrBadURL, digest, err)
	}
	dir := filepath.Join(cache, digest)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil // verified when pulled; never changed since
	}
	base := templateDir + digest + "/"
	man, _, err := store.get(ctx, base+templateManifest)
	if errors.Is(err, errNotFound) {
		return "", fmt.Errorf("%w: no template %s in %s", ErrNoReplica, digest, store)
	}
	if err != nil {
		return "", err
	}
	if sum := sha256.Sum256(man); hex.EncodeToString(sum[:]) != digest {
		return "", fmt.Errorf("%w: template %s: its manifest's digest is %x", ErrCorrupt, digest, sum)
	}
	var tf templateFiles
	dec := json.NewDecoder(bytes.NewReader(man))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tf); err != nil {
		return "", fmt.Errorf("%w: template %s: %v", ErrCorrupt, digest, err)
	}
	if tf.Signature != templateSignature || tf.Version != templateVersion {
		return "", fmt.Errorf("%w: template %s: signature %q version %d, this build reads %q version %d", ErrCorrupt, digest, tf.Signature, tf.Version, templateSignature, templateVersion)
	}
	err = vfs.BuildDir(vfs.Default, dir, RestoreSuffix, func(tmp string) error {
		for _, f := range tf.Files {
			if !fs.ValidPath(f.Path) || path.Base(f.Path) == "LOCK" {
				return fmt.Errorf("%w: template %s names the file %q", ErrCorrupt, digest, f.Path)
			}
			name := filepath.Join(tmp, filepath.FromSlash(f.Path))
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			out, err := os.Create(name)
			if err != nil {
				return err
			}
			h := sha256.New()
			err = store.copyRange(ctx, base+"f/"+f.Path, io.MultiWriter(out, h), 0, f.Size)
			if err == nil && hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
				err = fmt.Errorf("%w: template %s: %s does not match its checksum", ErrCorrupt, digest, f.Path)
			}
			if err = errors.Join(err, out.Sync(), out.Close()); err != nil {
				return err
			}
		}
		if _, err := verify(filepath.Join(tmp, provider.EngineDir)); err != nil {
			return err
		}
		return vfs.Default.SyncDir(filepath.Join(tmp, provider.EngineDir))
	})
	if err != nil {
		return "", fmt.Errorf("replica: pull template %s into %s: %w", digest, cache, err)
	}
	return dir, nil
}
