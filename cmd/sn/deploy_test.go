package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deployDir is the directory of the image's and the service's files.
const deployDir = "../../deploy"

// TestSystemdUnit checks deploy/sn.service with systemd-analyze verify,
// its ExecStart pointed at a built sn: no error and no warning. The
// control, the unit with a misspelt key, is warned about: the check sees
// a mistake.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile(filepath.Join(deployDir, "sn.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(unit, []byte("ExecStart=/usr/local/bin/sn serve")) {
		t.Fatalf("sn.service does not start /usr/local/bin/sn serve:\n%s", unit)
	}
	verify := func(text string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "sn.service")
		text = strings.Replace(text, "ExecStart=/usr/local/bin/sn", "ExecStart="+snBin, 1)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
		if err != nil {
			return fmt.Sprintf("%v: %s", err, out)
		}
		return string(out)
	}
	if out := verify(string(unit)); out != "" {
		t.Errorf("systemd-analyze verify sn.service:\n%s", out)
	}
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=sn", "NoNewPrivileges=yes", "ProtectSystem=strict", "CapabilityBoundingSet=\n", "SystemCallFilter=@system-service"} {
		if !bytes.Contains(unit, []byte(want)) {
			t.Errorf("sn.service has no %q", strings.TrimSpace(want))
		}
	}
	if out := verify(strings.Replace(string(unit), "NoNewPrivileges=", "NoNewPrivilege=", 1)); !strings.Contains(out, "Unknown key") {
		t.Errorf("the control, a misspelt key, is not warned about: %q", out)
	}
}

// TestImage builds the image of deploy/Containerfile with buildah (in a
// store of the test's own: these machines build images but cannot run
// containers), and checks what it holds: sn and the CA bundle alone, no
// shell, a user that is not root, sn as the entrypoint and sn health as
// the health check. Then it runs the image's own sn as the image would,
// as that user with HOME in a state directory of its own: sn serve
// answers, sn health says so, and SIGTERM stops it cleanly.
func TestImage(t *testing.T) {
	// Not t.TempDir: the image's user must reach the binary and its state.
	dir, err := os.MkdirTemp("", "sn-image")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	buildah := fmt.Sprintf("buildah --root %s --runroot %s --storage-driver vfs", filepath.Join(dir, "root"), filepath.Join(dir, "run"))
	t.Cleanup(func() {
		// vfs layers are plain directories, some not writable by their owner.
		exec.Command("chmod", "-R", "u+w", dir).Run()
		os.RemoveAll(dir)
	})
	build := exec.Command(filepath.Join(deployDir, "build-image"), "localhost/sn:test")
	build.Env = append(os.Environ(), "BUILDAH="+buildah, "SN_BIN="+snBin)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build-image: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	push := exec.Command("sh", "-c", buildah+" push localhost/sn:test dir:"+out)
	if b, err := push.CombinedOutput(); err != nil {
		t.Fatalf("buildah push: %v\n%s", err, b)
	}
	var manifest struct {
		Config struct{ Digest string }
		Layers []struct {
			Digest string
			Size   int64
		}
	}
	readJSON(t, filepath.Join(out, "manifest.json"), &manifest)
	var config struct {
		Config struct {
			User        string
			Entrypoint  []string
			Cmd         []string
			Env         []string
			WorkingDir  string
			Healthcheck struct{ Test []string }
		}
	}
	readJSON(t, blob(out, manifest.Config.Digest), &config)
	c := config.Config
	if c.User != "65532:65532" {
		t.Errorf("User = %q, want 65532:65532 (not root)", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/sn"}) {
		t.Errorf("Entrypoint = %q, want sn", c.Entrypoint)
	}
	if !slices.Equal(c.Healthcheck.Test, []string{"CMD", "/usr/local/bin/sn", "health"}) {
		t.Errorf("Healthcheck = %q, want sn health, which needs no shell", c.Healthcheck.Test)
	}
	if !slices.Equal(c.Cmd, []string{"serve", "--config", "/etc/sn/sn.yaml", "--listen", "0.0.0.0:8080"}) || !slices.Contains(c.Env, "HOME=/var/lib/sn") || c.WorkingDir != "/var/lib/sn" {
		t.Errorf("Cmd %q, Env %q, WorkingDir %q: want sn serve of /etc/sn/sn.yaml on :8080, in /var/lib/sn", c.Cmd, c.Env, c.WorkingDir)
	}

	// What the layers hold: every file, and sn's bytes.
	files := map[string]*tar.Header{}
	var snBytes []byte
	var size int64
	for _, l := range manifest.Layers {
		size += l.Size
		f, err := os.Open(blob(out, l.Digest))
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(f)
		var tr *tar.Reader
		if magic, _ := r.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
			gz, err := gzip.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			tr = tar.NewReader(gz)
		} else {
			tr = tar.NewReader(r)
		}
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name := strings.Trim(strings.TrimPrefix(h.Name, "./"), "/")
			files[name] = h
			if name == "usr/local/bin/sn" {
				if snBytes, err = io.ReadAll(tr); err != nil {
					t.Fatal(err)
				}
			}
		}
		f.Close()
	}
	var regular []string
	for name, h := range files {
		if h.Typeflag != tar.TypeDir {
			regular = append(regular, name)
		}
	}
	slices.Sort(regular)
	if want := []string{"etc/ssl/certs/ca-certificates.crt", "usr/local/bin/sn"}; !slices.Equal(regular, want) {
		t.Errorf("the image holds %q, want %q alone (no shell, no tools)", regular, want)
	}
	if h := files["var/lib/sn"]; h == nil || h.Typeflag != tar.TypeDir || h.Uid != 65532 {
		t.Errorf("/var/lib/sn = %+v, want a directory of user 65532", h)
	}
	if h := files["usr/local/bin/sn"]; h == nil || h.Mode&0o111 == 0 {
		t.Errorf("/usr/local/bin/sn = %+v, want an executable", h)
	}
	if size > 50<<20 {
		t.Errorf("the image's layers are %.1f MB, want under 50 MB", float64(size)/(1<<20))
	}
	if f, err := elf.NewFile(bytes.NewReader(snBytes)); err != nil {
		t.Errorf("the image's sn is not an ELF file: %v", err)
	} else if slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
		t.Errorf("the image's sn asks for a dynamic loader: on scratch it cannot start")
	}
	t.Logf("image: %d layers, %.1f MB; sn %.1f MB, static", len(manifest.Layers), float64(size)/(1<<20), float64(len(snBytes))/(1<<20))

	// The image's sn, run as the image runs it.
	bin := filepath.Join(dir, "sn")
	if err := os.WriteFile(bin, snBytes, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "state")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "sn.yaml") // read-only to sn, as /etc/sn is: the store is in the state directory
	if err := os.WriteFile(cfg, []byte("store: {backend: bolt, path: "+filepath.Join(home, "sn.db")+"}\ntemplates:\n  orders: {template: \"SN-@<seq, width=8>\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var cred *syscall.Credential
	if os.Getuid() == 0 {
		if err := os.Chown(home, 65532, 65532); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: 65532, Gid: 65532}
	}
	addr := freePort(t)
	serve := exec.Command(bin, "serve", "--config", cfg, "--listen", addr)
	serve.Dir, serve.Env = home, []string{"HOME=" + home}
	serve.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var log bytes.Buffer
	serve.Stdout, serve.Stderr = &log, &log
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	health := func() (string, error) {
		cmd := exec.Command(bin, "health", "--url", "http://"+addr+"/readyz", "--timeout", "2s")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := health()
		if err == nil {
			if !strings.Contains(out, "200 OK") {
				t.Errorf("sn health: %s", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sn health did not pass in 30s: %v %s\nsn serve:\n%s", err, out, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := http.Post("http://"+addr+"/v1/templates/orders/next", "application/json", strings.NewReader(`{"n": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(bytes.TrimSpace(body)) != `{"numbers":["SN-00000001","SN-00000002"]}` {
		t.Errorf("next: %s %s", resp.Status, body)
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := serve.Wait(); err != nil {
		t.Errorf("sn serve on SIGTERM: %v\n%s", err, log.String())
	}
	if _, err := os.Stat(filepath.Join(home, "sn.db")); err != nil {
		t.Errorf("the store is not in the state directory: %v", err)
	}
	// With the server gone, sn health fails: the check can fail.
	if out, err := health(); err == nil {
		t.Errorf("sn health passes with no server: %s", out)
	}
}

// blob is the file of a digest in a dir: image.
func blob(dir, digest string) string {
	return filepath.Join(dir, strings.TrimPrefix(digest, "sha256:"))
}

// readJSON decodes the JSON file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
