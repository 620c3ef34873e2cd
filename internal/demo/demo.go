package demo

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/mcworld"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/prefetch"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/replica"
	"github.com/df-mc/dragonfly/server"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/world"
)

// Config is what the demo server's flags set. New reads it and never
// modifies it.
type Config struct {
	Addr       string             // UDP address to listen on
	Dir        string             // world directory
	Durability blazedb.Durability // Blaze's fsync policy
	// Compression is the codec of the world's column data, and of an
	// import's (provider.Config.Compression). Default LZ4. Columns keep
	// the codec they were stored in until stored again or until blaze
	// compact -recompress. An arena's overlay, disposable, uses LZ4.
	Compression blazedb.Compression
	Offline     bool   // Xbox Live authentication off
	Import      string // an .mcworld to convert into Dir if Dir does not exist
	// ArenaTemplate, when set, is a Blaze world used read-only as the
	// template of an arena: Dir then holds the overlay, which is reset at
	// every start, so each start is a fresh match on the same map.
	ArenaTemplate string
	// BackupDir, when set, receives a backup of the running world and its
	// players' data every BackupEvery (default an hour), each in a
	// directory of its own named for its time; the newest BackupKeep
	// (default 5) are kept, and no entry not named as the backups are is
	// counted or deleted. Not in arena mode, whose changes are disposable.
	BackupDir   string
	BackupEvery time.Duration
	BackupKeep  int
	// SaveEvery is how often a checkpoint (provider.Checkpoint) saves the
	// worlds and the online players' data in one atomic batch, in place
	// of Dragonfly's autosave; zero means Dragonfly's ten minutes. Not in
	// arena mode, whose changes are disposable.
	SaveEvery time.Duration
	// Metrics, when set, is a TCP address to serve Prometheus' /metrics on
	// (metrics.go), e.g. 127.0.0.1:9100, with a page at / that shows a map
	// of the world (mappage.go); port 0 picks a free one
	// (Running.MetricsAddr).
	Metrics string
	// Operators are the players (by name) allowed the history commands:
	// /snapshot <name> and /rollback <name> [radius] (history.go). Not in
	// arena mode.
	Operators []string
	// TemplateCache is where an ArenaTemplate of the form
	// s3://BUCKET/PREFIX@DIGEST (published by blaze publish) is pulled
	// into, verified, and kept: default the user's cache directory's
	// blaze-templates.
	TemplateCache string
	// Replica, when set (s3://BUCKET/PREFIX), is where the world is
	// shipped as it is written (package replica); the object store's
	// endpoint and credentials are the AWS environment variables'. Not in
	// arena mode.
	Replica string
	Log     *slog.Logger
}

// Running is what New returns. Its fields are set once by New; each of
// Server, World, Arena and Prefetcher is safe for concurrent use, and so
// are Serve, StopBackups, MetricsAddr and StopMetrics.
type Running struct {
	// Server is not yet listening. Closing it saves every world and closes
	// its provider.
	Server *server.Server
	// World is the Blaze world the server stores; in arena mode, the
	// template (read-only).
	World *provider.DB
	// Arena is the overlay in arena mode, else nil. Shut it down when the
	// arena is retired.
	Arena *overlay.Provider
	// Prefetcher warms the cache with the chunks ahead of every player
	// Serve accepts: World's, or in arena mode the overlay's and the
	// template's. Serve closes it; a caller that never serves closes it
	// itself.
	Prefetcher *prefetch.Prefetcher

	// Replica ships World to its replica; nil without Config.Replica. The
	// server's close of the world closes it first.
	Replica *replica.Replicator

	backups     *backups       // nil without Config.BackupDir
	checkpoints *checkpoints   // nil in arena mode
	metrics     *metricsServer // nil without Config.Metrics
	log         *slog.Logger
}

// Serve starts the server listening and accepts players until it closes,
// each one followed by the Prefetcher. It then closes the Prefetcher,
// stops serving /metrics, stops the backups and returns their errors
// (StopBackups).
func (r *Running) Serve() error {
	r.Server.Listen()
	for p := range r.Server.Accept() {
		if r.Prefetcher != nil {
			p.Handle(prefetch.Handler{P: r.Prefetcher})
		}
	}
	if r.Prefetcher != nil {
		r.Prefetcher.Close()
	}
	metricsErr := r.StopMetrics()
	if r.checkpoints != nil {
		if err := r.checkpoints.Stop(); err != nil {
			metricsErr = errors.Join(metricsErr, fmt.Errorf("checkpoints failed while the server ran: %w", err))
		}
	}
	if err := r.StopBackups(); err != nil {
		return errors.Join(fmt.Errorf("backups failed while the server ran: %w", err), metricsErr)
	}
	return metricsErr
}

// StopBackups stops the backups Config.BackupDir asked for, waiting for
// one in progress, and returns every error they met (each was also
// logged). Call it when the server has closed.
func (r *Running) StopBackups() error {
	if r.backups == nil {
		return nil
	}
	return r.backups.Stop()
}

// New opens the world (importing it first if asked) and builds the server.
func (c Config) New() (*Running, error) {
	if c.Metrics != "" {
		return c.withMetrics()
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.BackupEvery == 0 {
		c.BackupEvery = time.Hour
	}
	if c.BackupKeep == 0 {
		c.BackupKeep = 5
	}
	if c.SaveEvery == 0 {
		c.SaveEvery = 10 * time.Minute
	}
	switch {
	case c.BackupEvery < 0 || c.BackupKeep < 0:
		return nil, fmt.Errorf("backups every %v, keeping %d: neither may be negative", c.BackupEvery, c.BackupKeep)
	case c.SaveEvery < 0:
		return nil, fmt.Errorf("checkpoints every %v: may not be negative", c.SaveEvery)
	case c.BackupDir != "" && c.ArenaTemplate != "":
		return nil, errors.New("an arena's changes are forgotten at every start: back up its template instead")
	case c.Replica != "" && c.ArenaTemplate != "":
		return nil, errors.New("an arena's changes are forgotten at every start: replicate its template instead")
	}
	if strings.HasPrefix(c.ArenaTemplate, "s3://") {
		dir, err := pullTemplate(c.ArenaTemplate, c.TemplateCache, c.Log)
		if err != nil {
			return nil, err
		}
		c.ArenaTemplate = dir
	}
	if err := c.checkDirs(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(c.Dir); c.Import != "" && errors.Is(err, os.ErrNotExist) {
		if err := importWorld(c.Import, c.Dir, c.Compression, c.Log); err != nil {
			return nil, fmt.Errorf("import %s: %w", c.Import, err)
		}
	}
	if c.ArenaTemplate != "" {
		return c.newArena()
	}
	db, err := provider.Config{Log: c.Log, Durability: c.Durability, Compression: c.Compression}.Open(c.Dir)
	switch {
	case errors.Is(err, provider.ErrLevelDBWorld):
		// The provider's error says which folder is LevelDB's and what
		// to convert: the world's own, or its parent when Dir is its db/.
		return nil, fmt.Errorf("%s is not a Blaze world: convert the LevelDB world first: %w", c.Dir, err)
	case errors.Is(err, blazedb.ErrLocked):
		return nil, fmt.Errorf("%s is in use: %w", c.Dir, err)
	case err != nil:
		return nil, fmt.Errorf("cannot open the world in %s: %w", c.Dir, err)
	}
	abs, _ := filepath.Abs(c.Dir)
	c.Log.Info("Blaze world opened", "dir", abs, "durability", c.Durability.String(), "compression", c.Compression.String(), "columns", db.Engine().Stats().ChunkKeys)
	if err := importOldPlayers(db, c.Dir, c.Log); err != nil {
		db.Close()
		return nil, err
	}
	var wp world.Provider = db
	var rep *replica.Replicator
	if c.Replica != "" {
		if rep, err = startReplica(db, c.Dir, c.Replica, c.Log); err != nil {
			db.Close()
			return nil, err
		}
		wp = replicated{DB: db, rep: rep, log: c.Log}
	}
	srv, err := c.server(wp, db.Players())
	if err != nil {
		wp.Close() // the replica's last shipment, then the world (again)
		return nil, err
	}
	r := &Running{Server: srv, World: db, Replica: rep, Prefetcher: prefetch.New(db, prefetch.Options{ViewRadius: chunkRadius}), log: c.Log,
		checkpoints: startCheckpoints(srv, c.SaveEvery, c.Log)}
	registerHistory(&history{db: db, ops: c.Operators, log: c.Log,
		worlds: func() []*world.World { return []*world.World{srv.World(), srv.Nether(), srv.End()} }})
	if c.BackupDir != "" {
		r.backups = startBackups(db, c.BackupDir, c.BackupEvery, c.BackupKeep, c.Log)
		c.Log.Info("backing the world up", "to", c.BackupDir, "every", c.BackupEvery, "keeping", c.BackupKeep)
	}
	return r, nil
}

// newArena serves an overlay over a read-only template, reset now.
func (c Config) newArena() (*Running, error) {
	tmpl, err := provider.Config{Log: c.Log, ReadOnly: true}.Open(c.ArenaTemplate)
	if err != nil {
		return nil, fmt.Errorf("open arena template %s: %w", c.ArenaTemplate, err)
	}
	o, err := overlay.Config{Log: c.Log, Durability: c.Durability}.Open(tmpl, c.Dir)
	if err != nil {
		tmpl.Close()
		return nil, err
	}
	start := time.Now()
	if err := o.ResetOverlay(); err != nil {
		o.Shutdown()
		tmpl.Close()
		return nil, err
	}
	c.Log.Info("arena reset: a fresh match on the template", "template", c.ArenaTemplate, "overlay", c.Dir, "took", time.Since(start))
	srv, err := c.server(o, nil) // a match is disposable: so are its players' inventories
	if err != nil {
		o.Shutdown()
		tmpl.Close()
		return nil, err
	}
	return &Running{Server: srv, World: tmpl, Arena: o, Prefetcher: prefetch.New(o, prefetch.Options{ViewRadius: chunkRadius}), log: c.Log}, nil
}

// chunkRadius caps the chunk radius players may ask for, and is the view
// radius the prefetcher predicts with: it cannot learn each player's (a
// Dragonfly player does not tell), and a guess below a player's own would
// warm only chunks the World already holds for them. A player who asks for
// less gets chunks warmed that they reach a little later.
const chunkRadius = 16

// server builds the Dragonfly server on a world provider and a player
// provider (nil: players are not saved), with Dragonfly's autosave off (the
// checkpoints save), and creates its listener. A listener that cannot be created (an address that does not
// parse or is taken, Xbox Live's keys out of reach without a network) is
// an error, and the worlds the server opened are closed, which closes wp.
func (c Config) server(wp world.Provider, pp player.Provider) (*server.Server, error) {
	uc := server.DefaultConfig()
	uc.Network.Address = c.Addr
	uc.Server.Name = "Blaze demo"
	uc.Server.AuthEnabled = !c.Offline
	uc.World.SaveData = false   // the world provider is Blaze, set below
	uc.Players.SaveData = false // the player provider is Blaze's, set below
	uc.Players.MaximumChunkRadius = chunkRadius
	uc.Resources.Folder = filepath.Join(c.Dir, "resources")
	conf, err := uc.Config(c.Log)
	if err != nil {
		return nil, err
	}
	conf.WorldProvider = wp
	if pp != nil {
		conf.PlayerProvider = pp
		conf.SaveInterval = -1 // the checkpoints save
	}
	// Dragonfly creates the listeners in Config.New, logs one it cannot
	// create and keeps a nil in its place, which Server.Listen then
	// dereferences: each is created through a wrapper that keeps the
	// error, and the server is taken down again before it starts.
	var lerrs []error
	var made []server.Listener
	for i, create := range conf.Listeners {
		conf.Listeners[i] = func(sc server.Config) (server.Listener, error) {
			l, err := create(sc)
			if err != nil {
				lerrs = append(lerrs, err)
			} else {
				made = append(made, l)
			}
			return l, err
		}
	}
	srv := conf.New()
	if err := errors.Join(lerrs...); err != nil {
		// As Server.Close would, which refuses a server not started: each
		// world saves what it holds, and the overworld, the last, closes
		// the provider.
		for _, w := range []*world.World{srv.End(), srv.Nether(), srv.World()} {
			w.Close()
		}
		for _, l := range made {
			l.Close()
		}
		if pp != nil {
			err = errors.Join(err, pp.Close())
		}
		if !c.Offline {
			return nil, fmt.Errorf("cannot listen on %s (with Xbox Live authentication on, listening needs Microsoft's servers; -offline turns it off): %w", c.Addr, err)
		}
		return nil, fmt.Errorf("cannot listen on %s: %w", c.Addr, err)
	}
	if c.Offline {
		c.Log.Warn("Xbox Live authentication is off: anyone can join with any name")
	}
	return srv, nil
}

// checkDirs refuses directories whose meaning is ambiguous: a world
// directory or arena template holding both a LevelDB and a Blaze world,
// and an arena whose overlay and template lie one inside the other (a
// reset empties the overlay's directory).
func (c Config) checkDirs() error {
	for _, d := range []string{c.Dir, c.ArenaTemplate} {
		if d == "" {
			continue
		}
		if _, err := convert.Kind(d); errors.Is(err, convert.ErrAmbiguousWorld) {
			return err
		}
	}
	if c.ArenaTemplate == "" {
		return nil
	}
	for _, p := range [][2]string{{c.Dir, c.ArenaTemplate}, {c.ArenaTemplate, c.Dir}} {
		in, err := fsutil.Inside(p[0], p[1])
		if err != nil {
			return err
		}
		if in {
			return fmt.Errorf("%w: the arena's overlay -world %s and its template -arena %s must be apart, neither inside the other: each reset empties the overlay's directory", ErrAmbiguous, c.Dir, c.ArenaTemplate)
		}
	}
	return nil
}

// importSuffix names the directory an import converts into before it is
// renamed to the world's (vfs.BuildDir): the world's directory appears
// only once the import is whole, so an import cut short (Ctrl-C, a crash)
// is done again at the next start instead of serving half a world.
const importSuffix = ".import-tmp"

// importWorld converts a Bedrock .mcworld into a new Blaze world at dir.
func importWorld(file, dir string, comp blazedb.Compression, log *slog.Logger) error {
	tmp, err := os.MkdirTemp("", "blaze-import-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := mcworld.Unpack(file, tmp); err != nil {
		return err
	}
	// Only a Bedrock (LevelDB) world is imported: a zipped Blaze world
	// would be converted to LevelDB, which the server then refuses.
	switch kind, err := convert.Kind(tmp); {
	case err != nil:
		return err
	case kind != "leveldb":
		return fmt.Errorf("%w: %s holds a Blaze world, not a Bedrock one: unzip it and give its directory as -world", ErrAmbiguous, file)
	}
	if err := os.RemoveAll(dir + importSuffix); err != nil {
		return fmt.Errorf("remove what an import cut short left: %w", err)
	}
	var r *convert.Report
	err = vfs.BuildDir(vfs.Default, dir, importSuffix, func(build string) (err error) {
		r, err = convert.Convert(tmp, build, convert.Options{Log: log, Compression: comp})
		return err
	})
	if err != nil {
		return err
	}
	log.Info("imported a world", "from", file, "columns", r.Columns, "unreadable", len(r.Failed), "took", r.Took)
	return nil
}
