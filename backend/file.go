package backend

import "github.com/sngen/sn/config"

// checkFile checks the sequence of t for a backend whose store is one
// file (bolt, sqlite): it requires a path, and the store is the file,
// whatever the path's spelling.
func checkFile(t *config.Target, backend string) (config.StoreInfo, error) {
	st := config.StoreInfo{Durable: true, Fields: append([]string{"path"}, segmentFields...)}
	s, err := decode(t)
	if err != nil {
		return st, err
	}
	if s.Path == "" {
		return st, missing("path", backend, "a file")
	}
	abs, err := t.File(s.Path)
	if err != nil {
		return st, &config.Error{Field: "path", Err: err}
	}
	st.ID = fileKey(backend, abs)
	return st, nil
}

// fileKey is the config.Share key, and the store ID, of the file at abs
// (as storeFile gives it) of backend.
func fileKey(backend, abs string) string { return backend + " " + abs }
