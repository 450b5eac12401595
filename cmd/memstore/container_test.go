//go:build linux

// The image test runs Linux containers with podman and reads file owners
// the Unix way, so it builds on Linux only.

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/memstore/memstore/internal/freeport"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/syncbuf"
)

// The container image (Dockerfile, compose.yaml) is tested four ways:
// TestContainerFiles reads both files and checks what the image and the
// services promise; TestContainerCommand runs the image's command line,
// with the image's environment, outside a container, and
// TestContainerReplicas so runs the postgres profile's replicas;
// TestContainerImage builds the image with podman and runs it, where
// podman is installed.

// repoRoot is the repository's root, two directories up from this
// package's.
const repoRoot = "../.."

// dockerInstruction is one instruction of a Dockerfile: its keyword in
// capitals and the rest of its line, continuation lines joined.
type dockerInstruction struct {
	cmd, args string
}

// dockerStage is a stage of a Dockerfile: FROM's image and name, and the
// instructions after it.
type dockerStage struct {
	from, name string
	ins        []dockerInstruction
}

// dockerfile is a parsed Dockerfile: the instructions before the first
// FROM (ARGs), and the stages.
type dockerfile struct {
	global []dockerInstruction
	stages []*dockerStage
}

// parseDockerfile reads a Dockerfile: comments and blank lines dropped
// (also inside a continued instruction, as Docker does), lines ending in
// a backslash joined to the next.
func parseDockerfile(t *testing.T, name string) *dockerfile {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var cur strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if s, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("%s ends in a continued line: %q", name, cur.String())
	}
	df := &dockerfile{}
	for _, l := range lines {
		cmd, args, _ := strings.Cut(l, " ")
		in := dockerInstruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				f = f[1:] // --platform=...
			}
			st := &dockerStage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			df.stages = append(df.stages, st)
			continue
		}
		if len(df.stages) == 0 {
			df.global = append(df.global, in)
		} else {
			st := df.stages[len(df.stages)-1]
			st.ins = append(st.ins, in)
		}
	}
	return df
}

// all is the arguments of every instruction cmd of st, in order.
func (st *dockerStage) all(cmd string) []string { return instructionArgs(st.ins, cmd) }

// one is the arguments of st's only instruction cmd; a test error when
// there is not exactly one.
func (st *dockerStage) one(t *testing.T, cmd string) string {
	t.Helper()
	all := st.all(cmd)
	if len(all) != 1 {
		t.Errorf("the final stage has %d %s instructions %q; want one", len(all), cmd, all)
		return ""
	}
	return all[0]
}

// env is the environment that st's ENV instructions set (KEY=VALUE
// form, values unquoted).
func (st *dockerStage) env(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, args := range st.all("ENV") {
		for _, kv := range strings.Fields(args) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("ENV %s: write each variable as KEY=VALUE", args)
			}
			env[k] = strings.Trim(v, `"`)
		}
	}
	return env
}

// execForm decodes an instruction's exec form (a JSON array), the form
// that runs without a shell, which the image does not have.
func execForm(t *testing.T, what, args string) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(args), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("%s %s: want the exec form, a JSON array (the image has no shell): %v", what, args, err)
	}
	return argv
}

// imageCommand is what the image runs: its ENTRYPOINT and CMD, its
// environment and its HEALTHCHECK's command, as the Dockerfile says.
type imageCommand struct {
	argv        []string
	env         map[string]string
	healthcheck []string
	user        string
	port        string // EXPOSE's
}

// checkDockerfile checks the Dockerfile's promises and returns what its
// image runs.
func checkDockerfile(t *testing.T) imageCommand {
	t.Helper()
	df := parseDockerfile(t, filepath.Join(repoRoot, "Dockerfile"))
	if len(df.stages) != 2 {
		t.Fatalf("the Dockerfile has %d stages; want 2, a build and the image", len(df.stages))
	}
	build, final := df.stages[0], df.stages[1]

	// The build: the Go of go.mod, a static binary of ./cmd/memstore.
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod names no Go version")
	}
	if !slices.Contains(instructionArgs(df.global, "ARG"), "GO_VERSION="+string(m[1])) {
		t.Errorf("the Dockerfile's ARGs %q do not set GO_VERSION=%s, go.mod's", instructionArgs(df.global, "ARG"), m[1])
	}
	if build.from != "golang:${GO_VERSION}" || build.name != "build" {
		t.Errorf("the first stage is FROM %s AS %s; want golang:${GO_VERSION} AS build", build.from, build.name)
	}
	runs := strings.Join(build.all("RUN"), "\n")
	for _, want := range []string{"CGO_ENABLED=0", "go build", "-trimpath", "./cmd/memstore", "-o /rootfs/usr/local/bin/memstore"} {
		if !strings.Contains(runs, want) {
			t.Errorf("the build stage's RUN instructions do not hold %q:\n%s", want, runs)
		}
	}

	// The image: nothing but what the build made, run by a user that is
	// not root, with its data in the volume /data.
	if final.from != "scratch" {
		t.Errorf("the image is FROM %s; want scratch: the static binary needs no base", final.from)
	}
	for _, st := range df.stages {
		if adds := st.all("ADD"); len(adds) > 0 {
			t.Errorf("ADD %q: use COPY; ADD fetches URLs and unpacks archives", adds)
		}
	}
	for _, c := range final.all("COPY") {
		if !strings.HasPrefix(c, "--from=build ") {
			t.Errorf("COPY %s: the image takes only what the build stage made", c)
		}
	}
	user := final.one(t, "USER")
	if uid, _, _ := strings.Cut(user, ":"); uid == "" || uid == "0" || uid == "root" {
		t.Errorf("USER %s: the server must not run as root", user)
	} else if _, err := strconv.Atoi(uid); err != nil {
		t.Errorf("USER %s: the image has no /etc/passwd; give the user as a number", user)
	}
	if v := final.one(t, "VOLUME"); v != "/data" && v != `["/data"]` {
		t.Errorf("VOLUME %s; want /data", v)
	}
	if w := final.one(t, "WORKDIR"); w != "/data" {
		t.Errorf("WORKDIR %s; want /data", w)
	}
	env := final.env(t)
	if db := env["MEMSTORE_DB"]; !strings.HasPrefix(db, "/data/") {
		t.Errorf("MEMSTORE_DB=%q: the database must be in the volume /data", db)
	}
	host, port, err := net.SplitHostPort(env["MEMSTORE_ADDR"])
	if err != nil || (host != "0.0.0.0" && host != "") {
		t.Errorf("MEMSTORE_ADDR=%q: in a container the server must listen on every interface (0.0.0.0:PORT), or no published port reaches it", env["MEMSTORE_ADDR"])
	}
	if e := final.one(t, "EXPOSE"); e != port && e != port+"/tcp" {
		t.Errorf("EXPOSE %s, but the server listens on port %s", e, port)
	}
	hc := final.one(t, "HEALTHCHECK")
	_, hcCmd, ok := strings.Cut(hc, "CMD ")
	if !ok {
		t.Fatalf("HEALTHCHECK %s: no CMD", hc)
	}
	health := execForm(t, "HEALTHCHECK CMD", hcCmd)
	if !slices.Equal(health, []string{"memstore", "healthcheck"}) {
		t.Errorf("HEALTHCHECK CMD %q; want [memstore healthcheck]: it reads the server's own variables", health)
	}
	argv := append(execForm(t, "ENTRYPOINT", final.one(t, "ENTRYPOINT")), execForm(t, "CMD", final.one(t, "CMD"))...)
	if !slices.Equal(argv, []string{"memstore", "serve"}) {
		t.Errorf("the image runs %q; want memstore serve, configured by its variables", argv)
	}
	if !strings.HasPrefix(env["PATH"], "/usr/local/bin") {
		t.Errorf("PATH=%q does not find /usr/local/bin/memstore", env["PATH"])
	}

	ignore, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".git", "*.db", "*.key"} {
		if !slices.Contains(strings.Fields(string(ignore)), want) {
			t.Errorf(".dockerignore does not leave out %s", want)
		}
	}
	return imageCommand{argv: argv, env: env, healthcheck: health, user: user, port: port}
}

// instructionArgs is the arguments of every instruction cmd of ins, in
// order.
func instructionArgs(ins []dockerInstruction, cmd string) []string {
	var out []string
	for _, in := range ins {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// composeFile is what the tests read of compose.yaml.
type composeFile struct {
	Services map[string]struct {
		Build       string            `yaml:"build"`
		Image       string            `yaml:"image"`
		Profiles    []string          `yaml:"profiles"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		Environment map[string]string `yaml:"environment"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// readCompose reads compose.yaml.
func readCompose(t *testing.T) *composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return &c
}

// replicas is the memstore services of the postgres profile, by name.
func (c *composeFile) replicas() []string {
	var names []string
	for name, s := range c.Services {
		if s.Image == "memstore" && slices.Contains(s.Profiles, "postgres") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// TestContainerFiles checks the Dockerfile's image (see checkDockerfile)
// and compose.yaml's services: memstore on SQLite by default, its data in
// a named volume; PostgreSQL and two replicas in the "postgres" profile,
// the password never in a URL, the second replica started once the first
// made the first key.
func TestContainerFiles(t *testing.T) {
	img := checkDockerfile(t)

	c := readCompose(t)
	for name, s := range c.Services {
		for _, v := range s.Volumes {
			if vol, _, _ := strings.Cut(v, ":"); !strings.HasPrefix(vol, ".") && !strings.HasPrefix(vol, "/") {
				if _, ok := c.Volumes[vol]; !ok {
					t.Errorf("service %s mounts the volume %s, not declared under volumes", name, vol)
				}
			}
		}
		if s.Image != "memstore" {
			continue
		}
		if s.Build != "." {
			t.Errorf("service %s: build %q; want . (the image is built here, never pulled)", name, s.Build)
		}
		for _, p := range s.Ports {
			if !strings.HasSuffix(p, ":"+img.port) {
				t.Errorf("service %s publishes %s, not the image's port %s", name, p, img.port)
			}
		}
	}

	sqlite, ok := c.Services["memstore"]
	switch {
	case !ok:
		t.Fatal("compose.yaml has no service memstore")
	case len(sqlite.Profiles) > 0:
		t.Errorf("service memstore is in profiles %q; 'docker compose up' must start it", sqlite.Profiles)
	case !slices.Contains(sqlite.Volumes, "memstore-data:/data"):
		t.Errorf("service memstore mounts %q; want the named volume memstore-data at /data", sqlite.Volumes)
	case len(sqlite.Ports) != 1 || sqlite.Ports[0] != "127.0.0.1:"+img.port+":"+img.port:
		t.Errorf("service memstore publishes %q; want 127.0.0.1:%s:%[2]s", sqlite.Ports, img.port)
	case sqlite.Environment["MEMSTORE_DB"] != "":
		t.Errorf("service memstore sets MEMSTORE_DB=%q; the image's is in its volume", sqlite.Environment["MEMSTORE_DB"])
	}

	pg, ok := c.Services["postgres"]
	if !ok || !slices.Equal(pg.Profiles, []string{"postgres"}) {
		t.Fatalf("compose.yaml has no service postgres in the profile postgres alone: %+v", pg)
	}
	if v, _ := strconv.Atoi(strings.TrimPrefix(pg.Image, "postgres:")); v < 15 {
		t.Errorf("service postgres runs %s; memstore needs PostgreSQL 15 or newer", pg.Image)
	}
	if len(pg.Ports) > 0 {
		t.Errorf("service postgres publishes %q; only the replicas need it", pg.Ports)
	}
	if pw := pg.Environment["POSTGRES_PASSWORD"]; !strings.HasPrefix(pw, "${POSTGRES_PASSWORD") {
		t.Errorf("POSTGRES_PASSWORD is %q; want it from the environment, never written in the file", pw)
	}
	if len(pg.Healthcheck.Test) == 0 {
		t.Error("service postgres has no healthcheck for the replicas to wait on")
	}
	replicas := c.replicas()
	if len(replicas) != 2 {
		t.Fatalf("the postgres profile runs the replicas %q; want two", replicas)
	}
	for i, name := range replicas {
		s := c.Services[name]
		db := s.Environment["MEMSTORE_DB"]
		if !strings.HasPrefix(db, "postgres://memstore@postgres:") {
			t.Errorf("replica %s: MEMSTORE_DB=%q; want postgres://memstore@postgres:..., the password kept out of the URL", name, db)
		}
		if s.Environment["PGPASSWORD"] != pg.Environment["POSTGRES_PASSWORD"] {
			t.Errorf("replica %s: PGPASSWORD=%q, not the server's %q", name, s.Environment["PGPASSWORD"], pg.Environment["POSTGRES_PASSWORD"])
		}
		if s.DependsOn["postgres"].Condition != "service_healthy" {
			t.Errorf("replica %s does not wait for postgres to be healthy: %+v", name, s.DependsOn)
		}
		if i > 0 && s.DependsOn[replicas[0]].Condition != "service_healthy" {
			t.Errorf("replica %s does not wait for %s to be healthy, so both may make a first key: %+v", name, replicas[0], s.DependsOn)
		}
	}
}

// imageEnv is the image's environment, with a compose service's
// variables over it, /data (the volume) at dir, and the server's port
// changed to port: the container's, outside one.
func imageEnv(img imageCommand, service map[string]string, dir string, port int) []string {
	vars := maps.Clone(img.env)
	maps.Copy(vars, service)
	delete(vars, "PATH") // the test binary is run by its path
	var env []string
	for k, v := range vars {
		if k == "MEMSTORE_ADDR" {
			host, _, _ := net.SplitHostPort(v)
			v = net.JoinHostPort(host, strconv.Itoa(port))
		}
		if v == "/data" || strings.HasPrefix(v, "/data/") {
			v = dir + strings.TrimPrefix(v, "/data")
		}
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// keyLine finds the first API key that a server printed.
var keyLine = regexp.MustCompile(`sk-memstore-[A-Za-z0-9_-]+`)

// TestContainerCommand runs the command line of the image (ENTRYPOINT
// and CMD, with its environment and nothing else, /data a temporary
// directory) outside a container: it serves /healthz and the API with
// the first key it prints and keeps in /data, its HEALTHCHECK says it is
// healthy, and a restart on the same /data makes no other key.
func TestContainerCommand(t *testing.T) {
	img := checkDockerfile(t)
	if t.Failed() {
		t.FailNow()
	}
	data := t.TempDir()
	port, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	env := imageEnv(img, nil, data, port)
	base := "http://127.0.0.1:" + strconv.Itoa(port)

	first := startImageCommand(t, img.argv, env, base)
	key := keyLine.FindString(first.stdout.String())
	if key == "" {
		t.Fatalf("the first run printed no key:\n%s", first.stdout)
	}
	saved, err := os.ReadFile(filepath.Join(data, "memstore.db.key"))
	if err != nil || strings.TrimSpace(string(saved)) != key {
		t.Errorf("/data/memstore.db.key holds %q (%v); want the printed key", saved, err)
	}
	a := newAPI(base, key)
	store := a.createStore(t, "Container")
	a.must(t, "POST", "/v1/memory_stores/"+store+"/memories", map[string]string{"path": "/a.md", "content": "kept in /data\n"}, nil)

	hc := exec.Command(memstoreBin(t), img.healthcheck[1:]...)
	hc.Env = env
	if out, err := hc.CombinedOutput(); err != nil || !strings.Contains(string(out), "/healthz: 200 OK") {
		t.Fatalf("the HEALTHCHECK %q: %v\n%s", img.healthcheck, err, out)
	}

	// A restart on the same /data, as after an upgrade.
	first.stop(t)
	second := startImageCommand(t, img.argv, env, base)
	if k := keyLine.FindString(second.stdout.String()); k != "" {
		t.Errorf("a second run on the same /data printed a key")
	}
	var list struct {
		Data []struct{ Path string } `json:"data"`
	}
	a.must(t, "GET", "/v1/memory_stores/"+store+"/memories", nil, &list)
	if len(list.Data) != 1 || list.Data[0].Path != "/a.md" {
		t.Errorf("after a restart the store holds %+v; want /a.md", list.Data)
	}
}

// TestContainerReplicas runs the postgres profile's replicas outside
// containers: the image's command with each replica's environment, on a
// PostgreSQL database of the test's own in place of the postgres service,
// each started once the one before is healthy, as compose starts them.
// The first makes and prints the first key, the others none, and all
// serve the same stores.
func TestContainerReplicas(t *testing.T) {
	img := checkDockerfile(t)
	c := readCompose(t)
	if t.Failed() {
		t.FailNow()
	}
	db := pgtest.DB(t, migratePostgres)
	var key string
	var bases []string
	for i, name := range c.replicas() {
		vars := maps.Clone(c.Services[name].Environment)
		u, err := url.Parse(vars["MEMSTORE_DB"])
		if err != nil || u.User == nil {
			t.Fatalf("replica %s: MEMSTORE_DB=%q", name, vars["MEMSTORE_DB"])
		}
		if _, has := u.User.Password(); has {
			t.Fatalf("replica %s: MEMSTORE_DB=%q holds a password", name, vars["MEMSTORE_DB"])
		}
		vars["MEMSTORE_DB"] = db
		vars["PGPASSWORD"] = "" // the test's server trusts local connections
		port, err := freeport.Port()
		if err != nil {
			t.Fatal(err)
		}
		base := "http://127.0.0.1:" + strconv.Itoa(port)
		p := startImageCommand(t, img.argv, imageEnv(img, vars, t.TempDir(), port), base)
		printed := keyLine.FindString(p.stdout.String())
		switch {
		case i == 0 && printed == "":
			t.Fatalf("the first replica, %s, printed no key:\n%s", name, p.stdout)
		case i == 0:
			key = printed
		case printed != "":
			t.Errorf("replica %s printed a key, after %s made the first", name, c.replicas()[0])
		}
		bases = append(bases, base)
	}
	store := newAPI(bases[0], key).createStore(t, "Replicas")
	for _, base := range bases[1:] {
		newAPI(base, key).must(t, "GET", "/v1/memory_stores/"+store, nil, nil)
	}
}

// imageProc is the image's command running outside a container.
type imageProc struct {
	cmd    *exec.Cmd
	stdout *syncbuf.Buffer
	done   chan error
}

// startImageCommand starts argv (memstore ...) with env alone, and waits
// until base/healthz answers 200 (30 seconds at most). It is stopped at
// the end of the test, if not before.
func startImageCommand(t *testing.T, argv, env []string, base string) *imageProc {
	t.Helper()
	cmd := exec.Command(memstoreBin(t), argv[1:]...)
	cmd.Env = env
	p := &imageProc{cmd: cmd, stdout: &syncbuf.Buffer{}, done: make(chan error, 1)}
	stderr := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = p.stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { p.stop(t) })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case exit := <-p.done:
			p.done = nil
			t.Fatalf("%q with %q ended before serving (%v):\n%s\n%s", argv, env, exit, p.stdout, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q with %q: /healthz did not answer 200 within 30s (%v):\n%s\n%s", argv, env, err, p.stdout, stderr)
		}
	}
}

// stop stops the command as a container engine does (SIGTERM), and
// checks that it exits 0 within 15 seconds; once stopped, it does
// nothing.
func (p *imageProc) stop(t *testing.T) {
	if p.done == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("the server stopped by SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		t.Errorf("the server did not stop within 15s of SIGTERM")
	}
	p.done = nil
}

// podmanArgs are the arguments of every 'podman run': runc, when
// installed, works on every cgroup layout (crun refuses a hybrid one), and
// explicit limits, since podman's default of a million open files may be
// more than this machine lets a process raise its limit to.
func podmanArgs() []string {
	args := []string{"--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"}
	if _, err := exec.LookPath("runc"); err == nil {
		args = append([]string{"--runtime", "runc"}, args...)
	}
	return args
}

// podman runs podman with args, failing the test on an error.
func podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("podman", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestContainerImage builds the image with podman and runs it as
// 'docker run -p PORT:6366 -v VOLUME:/data IMAGE' would: the server
// answers on the published port, runs as the image's user, keeps its
// files in the volume, is healthy by its HEALTHCHECK, and a new
// container on the same volume (an upgrade) keeps the data and the key.
//
// No base image can be pulled here, so the build stage is replaced by
// its own commands run on this machine (the static build of
// ./cmd/memstore and the files beside it); the image's stage is the
// Dockerfile's, as written.
func TestContainerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds memstore and an image: skipped with -short")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("podman is not installed; .ci/run installs Debian's podman and runc")
		}
		t.Skip("podman is not installed: Debian's podman (and runc) build and run the image here; TestContainerFiles and TestContainerCommand test the Dockerfile without it")
	}
	img := checkDockerfile(t)
	if t.Failed() {
		t.FailNow()
	}
	ctxDir := t.TempDir()
	buildStage(t, ctxDir)
	final := imageStage(t)
	containerfile := "FROM scratch AS build\nCOPY rootfs /rootfs\nCOPY data /data\n\n" + final
	if err := os.WriteFile(filepath.Join(ctxDir, "Containerfile"), []byte(containerfile), 0o600); err != nil {
		t.Fatal(err)
	}
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	tag, volume := "localhost/memstore-test:"+suffix, "memstore-test-"+suffix
	// The docker format keeps the HEALTHCHECK, which OCI's drops.
	podman(t, "build", "--layers=false", "--format", "docker", "-t", tag, "-f", filepath.Join(ctxDir, "Containerfile"), ctxDir)
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", tag).Run() })
	t.Cleanup(func() { exec.Command("podman", "volume", "rm", "-f", volume).Run() })

	var inspect []struct {
		Config struct {
			User       string
			Env        []string
			Entrypoint []string
			Cmd        []string
			Volumes    map[string]any
		}
		Healthcheck struct{ Test []string } // podman keeps it beside Config
		Size        int64
	}
	if err := json.Unmarshal([]byte(podman(t, "image", "inspect", tag)), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	cfg := inspect[0].Config
	if cfg.User != img.user || !slices.Equal(append(cfg.Entrypoint, cfg.Cmd...), img.argv) || cfg.Volumes["/data"] == nil ||
		!slices.Equal(inspect[0].Healthcheck.Test, append([]string{"CMD"}, img.healthcheck...)) {
		t.Errorf("the image's configuration: %+v, healthcheck %q", cfg, inspect[0].Healthcheck.Test)
	}
	t.Logf("image size: %.1f MB", float64(inspect[0].Size)/1e6)

	port, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	run := func(name string) {
		t.Helper()
		args := append([]string{"run", "-d", "--name", name}, podmanArgs()...)
		podman(t, append(args, "-p", fmt.Sprintf("127.0.0.1:%d:%s", port, img.port), "-v", volume+":/data", tag)...)
		t.Cleanup(func() { exec.Command("podman", "rm", "-f", "-t", "0", name).Run() })
		waitHealthz(t, base, name)
	}
	first := "memstore-test-1-" + suffix
	run(first)
	logs := podman(t, "logs", first)
	key := keyLine.FindString(logs)
	if key == "" {
		t.Fatalf("the container printed no key:\n%s", logs)
	}
	a := newAPI(base, key)
	store := a.createStore(t, "Container")
	a.must(t, "POST", "/v1/memory_stores/"+store+"/memories", map[string]string{"path": "/a.md", "content": "kept in the volume\n"}, nil)
	if out, err := exec.Command("podman", "healthcheck", "run", first).CombinedOutput(); err != nil {
		t.Errorf("podman healthcheck run: %v\n%s", err, out)
	}
	// The files are the image user's, and its only.
	mount := podman(t, "volume", "inspect", "--format", "{{.Mountpoint}}", volume)
	uid, _, _ := strings.Cut(img.user, ":")
	for _, f := range []string{"memstore.db", "memstore.db.key"} {
		fi, err := os.Stat(filepath.Join(mount, f))
		if err != nil {
			t.Errorf("the volume has no %s: %v", f, err)
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		if strconv.Itoa(int(st.Uid)) != uid || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s in the volume: owner %d, mode %v; want %s and 0600", f, st.Uid, fi.Mode().Perm(), uid)
		}
	}

	// An upgrade: the container replaced by a new one on the same volume.
	podman(t, "stop", "-t", "15", first)
	if code := podman(t, "inspect", "--format", "{{.State.ExitCode}}", first); code != "0" {
		t.Errorf("the server stopped with status %s", code)
	}
	podman(t, "rm", first)
	second := "memstore-test-2-" + suffix
	run(second)
	if logs := podman(t, "logs", second); keyLine.MatchString(logs) {
		t.Errorf("a new container on the same volume printed a key:\n%s", logs)
	}
	var list struct {
		Data []struct{ Path string } `json:"data"`
	}
	a.must(t, "GET", "/v1/memory_stores/"+store+"/memories", nil, &list)
	if len(list.Data) != 1 || list.Data[0].Path != "/a.md" {
		t.Errorf("after the upgrade the store holds %+v; want /a.md", list.Data)
	}
}

// waitHealthz waits up to 60 seconds for base/healthz, served by the
// container name, to answer 200, and fails at once if the container
// stops.
func waitHealthz(t *testing.T, base, name string) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
			err = errors.New(res.Status)
		}
		last = err
		if running, _ := exec.Command("podman", "inspect", "--format", "{{.State.Running}}", name).Output(); strings.TrimSpace(string(running)) == "false" {
			break
		}
	}
	logs, _ := exec.Command("podman", "logs", name).CombinedOutput()
	t.Fatalf("%s/healthz did not answer 200 (%v); the container's log:\n%s", base, last, logs)
}

// buildStage runs the commands of the Dockerfile's build stage on this
// machine, into dir/rootfs and dir/data: the same static build of
// ./cmd/memstore, for this machine's architecture.
func buildStage(t *testing.T, dir string) {
	t.Helper()
	df := parseDockerfile(t, filepath.Join(repoRoot, "Dockerfile"))
	for _, run := range df.stages[0].all("RUN") {
		if strings.HasPrefix(run, "go mod download") {
			continue // the module cache has them
		}
		run = strings.ReplaceAll(run, "/rootfs/", dir+"/rootfs/")
		run = regexp.MustCompile(`(^|\s)/data(\s|$)`).ReplaceAllString(run, "${1}"+dir+"/data${2}")
		cmd := exec.Command("sh", "-ec", run)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "TARGETOS=linux", "TARGETARCH="+runtime.GOARCH, "VERSION=v0.0.1-image", "COMMIT=0123456789abcdef")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", run, err, out)
		}
		t.Logf("%s: %v", firstWords(run, 4), time.Since(start).Round(time.Second))
	}
	// The build arguments stamp the version as a release build does.
	out, err := exec.Command(filepath.Join(dir, "rootfs", "usr", "local", "bin", "memstore"), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "memstore 0.0.1-image (commit 0123456") {
		t.Errorf("the image's memstore --version: %q %v; want the stamped version and commit", out, err)
	}
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// imageStage is the Dockerfile's last stage as written, from its FROM.
func imageStage(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(strings.ToUpper(sc.Text()), "FROM ") {
			lines = lines[:0]
		}
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n") + "\n"
}
