package store_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/store/storetest"
)

// Known secret values, written through the normal paths and then looked for
// in the database's bytes.
const (
	secretInput    = "input-hunter2-7c1f"
	secretManifest = "registry-password-9e4d"
	secretKubecfg  = "kubeconfig-token-51ab"
	secretState    = "state-output-pw-0d33"
	secretOutputs  = "job-output-pw-a6e2"
	secretInstOut  = "install-output-pw-3b8c"
	secretInputs   = "deferred-input-pw-f410"
	secretCommand  = "debug-output-pw-2c97"
	secretCmdError = "debug-error-pw-6a05"
	secretConfig   = "config-default-pw-5e71"
	secretOIDC     = "oidc-client-secret-8d2e"
)

// configArchive is an app config holding a secret; the store keeps it
// base64-encoded, which is what a dump would show unsealed.
const configArchive = `[inputs.db_password]
default = "` + secretConfig + `"`

// manifest is a job manifest with a registry credential and a kubeconfig.
const manifest = `{"registry":{"password":"` + secretManifest + `"},"kubeconfig":"token: ` + secretKubecfg + `"}`

var secrets = []string{secretInput, secretManifest, secretKubecfg, secretState, secretOutputs, secretInstOut, secretInputs,
	secretCommand, secretCmdError, secretOIDC, base64.StdEncoding.EncodeToString([]byte(configArchive))}

// sealedFixture is a fixture whose store can be opened again with other keys.
type sealedFixture struct {
	fixture
	cfg store.Config
}

func newSealedFixture(t *testing.T, dialect string) sealedFixture {
	t.Helper()
	cfg := storetest.NewConfig(t, dialect)
	s := openWith(t, cfg, cfg.Keys)
	tn := storetest.NewTenant(t, s, store.InstallInput{Name: "db_password", Value: secretInput, Sensitive: true},
		store.InstallInput{Name: "region", Value: "eu"})
	return sealedFixture{fixture{s: s, org: tn.Org, inst: tn.Install, runner: tn.Runner}, cfg}
}

// openWith opens and migrates the fixture's database with a keyring.
func openWith(t *testing.T, cfg store.Config, ring *seal.Keyring) *store.Store {
	t.Helper()
	cfg.Keys = ring
	return storetest.OpenConfig(t, cfg)
}

// writeSecrets provisions, in short, with the known secrets: a terraform job
// whose manifest holds a registry password and a kubeconfig, the state it
// writes with a sensitive output, its outputs, the install's outputs, and a
// job given deferred inputs.
func (f sealedFixture) writeSecrets(t *testing.T, ctx context.Context) (tf, deferred store.Job) {
	t.Helper()
	tok := store.NewStateToken()
	tf, _, err := f.s.EnqueueJob(ctx, store.JobSpec{Key: "wf/apply", OrgID: f.org.ID, RunnerID: f.runner.ID, InstallID: &f.inst.ID,
		Type: protocol.JobTypeTerraform, Manifest: json.RawMessage(manifest), Workspace: "ws", StateToken: tok})
	if err != nil {
		t.Fatal(err)
	}
	if tf.Manifest != manifest {
		t.Errorf("enqueue returned manifest %q", tf.Manifest)
	}
	f.claim(t, tf.ID, time.Minute)
	st := `{"version":4,"serial":1,"lineage":"l","outputs":{"pw":{"value":"` + secretState + `","type":"string","sensitive":true}}}`
	if _, _, err := f.s.PutTerraformState(ctx, f.access(t, tf.ID, tok), "", []byte(st)); err != nil {
		t.Fatal(err)
	}
	out := `{"pw":"` + secretOutputs + `"}`
	if err := f.s.CompleteJob(ctx, f.runner.ID, tf.ID, protocol.CompleteRequest{Attempt: 1, Status: "succeeded", Outputs: json.RawMessage(out)}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.SaveOutputs(ctx, f.inst.ID, "sandbox", `{"pw":{"value":"`+secretInstOut+`","sensitive":true}}`); err != nil {
		t.Fatal(err)
	}
	deferred, _, err = f.s.EnqueueJob(ctx, store.JobSpec{Key: "wf/deferred", OrgID: f.org.ID, RunnerID: f.runner.ID, InstallID: &f.inst.ID,
		Type: protocol.JobTypeNoop, InputsDeferred: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.ProvideJobInputs(ctx, deferred.ID, json.RawMessage(`{"pw":"`+secretInputs+`"}`)); err != nil {
		t.Fatal(err)
	}
	f.writeConfigAndCommand(t, ctx)
	return tf, deferred
}

// writeConfigAndCommand syncs an app config holding a secret and records a
// debug command whose output and error show one, and sets the org's
// single sign-on with a client secret.
func (f sealedFixture) writeConfigAndCommand(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, _, err := f.s.SyncAppConfig(ctx, f.org.ID, f.inst.AppID, store.NewAppConfig{Archive: []byte(configArchive)}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.SetOIDC(ctx, f.org.ID, store.OIDCSettings{Issuer: "https://idp.test", ClientID: "outpost", ClientSecret: secretOIDC,
		RedirectURL: "https://outpost.test/auth/oidc/callback"}); err != nil {
		t.Fatal(err)
	}
	cmd, err := f.s.CreateInstallCommand(ctx, store.InstallCommand{OrgID: f.org.ID, InstallID: f.inst.ID, Args: []string{"env"},
		WorkflowID: "install/" + f.inst.ID + "/command/1"})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Status, cmd.Output, cmd.Error = status.JobFailed, "DB_PASSWORD="+secretCommand+"\n", "exit 1: "+secretCmdError
	if err := f.s.UpdateInstallCommand(ctx, store.InstallCommand{ID: cmd.ID, Status: cmd.Status, Output: cmd.Output, Error: cmd.Error}); err != nil {
		t.Fatal(err)
	}
}

// readConfigAndCommand reads the config's archive and the command's output
// back, as the API does.
func readConfigAndCommand(t *testing.T, ctx context.Context, s *store.Store, f sealedFixture) map[string]string {
	t.Helper()
	cfg, err := s.LatestAppConfig(ctx, f.org.ID, f.inst.AppID)
	if err != nil {
		t.Fatal(err)
	}
	archive, err := cfg.Archive()
	if err != nil || string(archive) != configArchive {
		t.Errorf("config archive %q, %v; want it as synced", archive, err)
	}
	cmds, err := s.ListInstallCommands(ctx, f.org.ID, f.inst.ID, 10)
	if err != nil || len(cmds) != 1 {
		t.Fatalf("commands %+v, %v", cmds, err)
	}
	one, err := s.GetInstallCommand(ctx, f.org.ID, cmds[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{secretConfig: string(archive), secretCommand: cmds[0].Output + one.Output, secretCmdError: cmds[0].Error + one.Error}
}

// readSecrets reads every secret back through the store, as the API, the
// gateway and the workflows do.
func readSecrets(t *testing.T, ctx context.Context, s *store.Store, f sealedFixture, tf, deferred store.Job) {
	t.Helper()
	inst, err := s.GetInstall(ctx, f.org.ID, f.inst.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, in := range inst.Inputs {
		got[in.Name] = in.Value
	}
	j, err := s.GetJob(ctx, f.org.ID, tf.ID)
	if err != nil {
		t.Fatal(err)
	}
	outcome, err := s.GetJobOutcome(ctx, tf.ID)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := s.TerraformStateOutputs(ctx, f.org.ID, "ws")
	if err != nil {
		t.Fatal(err)
	}
	installOuts, err := s.ListOutputs(ctx, f.inst.ID)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.GetJobByID(ctx, deferred.ID)
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]string{secretInput: got["db_password"], secretManifest: j.Manifest, secretKubecfg: j.Manifest,
		secretState: string(outs["pw"].Value), secretOutputs: outcome.Outputs, secretInstOut: installOuts["sandbox"], secretInputs: *d.Inputs}
	maps.Copy(read, readConfigAndCommand(t, ctx, s, f))
	for secret, v := range read {
		if !strings.Contains(v, secret) {
			t.Errorf("read %q, want %s in it", v, secret)
		}
	}
	if got["region"] != "eu" {
		t.Errorf("region input %q", got["region"])
	}
}

// forEachSealed runs test on each dialect's fixture after writeSecrets.
func forEachSealed(t *testing.T, test func(t *testing.T, ctx context.Context, f sealedFixture, tf, deferred store.Job)) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx := context.Background()
		f := newSealedFixture(t, d)
		tf, deferred := f.writeSecrets(t, ctx)
		test(t, ctx, f, tf, deferred)
	})
}

func TestSecretsAreSealedAtRest(t *testing.T) {
	forEachSealed(t, func(t *testing.T, ctx context.Context, f sealedFixture, tf, deferred store.Job) {
		readSecrets(t, ctx, f.s, f, tf, deferred)
		key, err := f.s.SigningKey(ctx, f.org.ID) // the org's registry signing key
		if err != nil {
			t.Fatal(err)
		}
		release, _, err := f.s.ReleaseKey(ctx, f.org.ID) // the org's release key
		if err != nil {
			t.Fatal(err)
		}
		dump := storetest.DatabaseBytes(t, f.s)
		if !bytes.Contains(dump, []byte("region")) {
			t.Fatalf("the dump (%d bytes) does not hold a plain input: not a dump of this database", len(dump))
		}
		for _, secret := range append(secrets, base64.RawStdEncoding.EncodeToString(key.Secret), string(key.Secret), release.PrivateKey) {
			if bytes.Contains(dump, []byte(secret)) {
				t.Errorf("%s is in the database's bytes", secret)
			}
		}
		// The runner's view: the heartbeat gives the deferred inputs.
		f.claim(t, deferred.ID, time.Minute)
		_, sig, err := f.s.HeartbeatJob(ctx, f.runner.ID, deferred.ID, 1, time.Minute)
		if err != nil || !strings.Contains(sig.Inputs, secretInputs) {
			t.Errorf("heartbeat inputs %q, %v", sig.Inputs, err)
		}
	})
}

func TestSealedValueCannotMoveToAnotherRow(t *testing.T) {
	forEachSealed(t, func(t *testing.T, ctx context.Context, f sealedFixture, tf, deferred store.Job) {
		err := f.s.DB().Exec("UPDATE jobs SET manifest = (SELECT manifest FROM jobs WHERE id = ?) WHERE id = ?", tf.ID, deferred.ID).Error
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.GetJobByID(ctx, deferred.ID); !errors.Is(err, seal.ErrTampered) {
			t.Errorf("read a manifest moved from another job: %v, want ErrTampered", err)
		}
	})
}

func newKey(t *testing.T) seal.KeyEncryptionKey {
	t.Helper()
	k, err := seal.ParseLocalKey(seal.GenerateKeyText())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ring(t *testing.T, current seal.KeyEncryptionKey, previous ...seal.KeyEncryptionKey) *seal.Keyring {
	t.Helper()
	r, err := seal.NewKeyring(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRotateKeysWhileInUse(t *testing.T) {
	forEachSealed(t, func(t *testing.T, ctx context.Context, f sealedFixture, tf, deferred store.Job) {
		oldKEK, newKEK := f.cfg.Keys.Current, newKey(t)

		// A process that does not know the new key yet keeps reading and
		// writing while another re-wraps under it.
		var wg sync.WaitGroup
		errs := make(chan error, 1)
		wg.Go(func() {
			for i := range 20 {
				err := f.s.SaveOutputs(ctx, f.inst.ID, "c"+string(rune('a'+i)), `{"pw":"x"}`)
				if err == nil {
					_, err = f.s.ListOutputs(ctx, f.inst.ID)
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
		rotated := openWith(t, f.cfg, ring(t, newKEK, oldKEK))
		n, err := rotated.RotateKeys(ctx)
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			t.Errorf("traffic during the rotation: %v", err)
		}
		if err != nil || n < 2 { // the install's and the org's
			t.Fatalf("rotate: %d, %v", n, err)
		}
		readSecrets(t, ctx, rotated, f, tf, deferred)
		counts, err := rotated.KeyStatus(ctx)
		if err != nil || len(counts) != 1 || counts[newKEK.ID()] != n {
			t.Errorf("key status after rotation %v, %v; want all %d under %s", counts, err, n, newKEK.ID())
		}

		// The old key dropped: everything still reads, and writes.
		onlyNew := openWith(t, f.cfg, ring(t, newKEK))
		readSecrets(t, ctx, onlyNew, f, tf, deferred)
		if err := onlyNew.SaveOutputs(ctx, f.inst.ID, "after", `{"pw":"y"}`); err != nil {
			t.Fatal(err)
		}

		// The old key alone is refused at start, naming the key expected.
		cfg := f.cfg
		cfg.Keys = ring(t, oldKEK)
		s, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = s.CheckKeys(ctx)
		if !errors.Is(err, seal.ErrUnknownKEK) || !strings.Contains(err.Error(), newKEK.ID()) {
			t.Errorf("start with the old key only: %v, want ErrUnknownKEK naming %s", err, newKEK.ID())
		}
	})
}

func TestPlaintextRowsAreSealedByMigrate(t *testing.T) {
	forEachSealed(t, func(t *testing.T, ctx context.Context, f sealedFixture, tf, deferred store.Job) {
		// As written before sealing.
		plain := manifest
		db := f.s.DB()
		if err := db.Exec("UPDATE jobs SET manifest = ? WHERE id = ?", plain, tf.ID).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("UPDATE install_inputs SET value = ? WHERE name = 'db_password'", secretInput).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("UPDATE app_configs SET content = ?", base64.StdEncoding.EncodeToString([]byte(configArchive))).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("UPDATE install_commands SET output = ?, error = ?", secretCommand, secretCmdError).Error; err != nil {
			t.Fatal(err)
		}
		if j, err := f.s.GetJobByID(ctx, tf.ID); err != nil || j.Manifest != plain {
			t.Fatalf("plaintext manifest read %q, %v", j.Manifest, err)
		}
		readConfigAndCommand(t, ctx, f.s, f) // plaintext reads as it is
		if err := f.s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		var raw []string
		db.Raw(`SELECT manifest FROM jobs WHERE id = ? UNION ALL SELECT value FROM install_inputs WHERE name IN ('db_password', 'region')
			UNION ALL SELECT content FROM app_configs UNION ALL SELECT output FROM install_commands UNION ALL SELECT error FROM install_commands
			ORDER BY 1`, tf.ID).Scan(&raw)
		if len(raw) != 6 || raw[0] != "eu" || !all(raw[1:], seal.IsSealed) {
			t.Errorf("after migrate the columns hold %q; want the secrets sealed, the plain input as it was", raw)
		}
		readSecrets(t, ctx, f.s, f, store.Job{ID: tf.ID}, deferred)
	})
}

func TestWrongKeyIsAClearErrorAtStart(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx := context.Background()
		f := newSealedFixture(t, d)
		f.writeSecrets(t, ctx)
		cfg := f.cfg
		cfg.Keys = ring(t, newKey(t))
		s, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = s.Migrate(ctx)
		if !errors.Is(err, seal.ErrUnknownKEK) || !strings.Contains(err.Error(), f.cfg.Keys.Current.ID()) {
			t.Errorf("migrate with another key: %v, want ErrUnknownKEK naming %s", err, f.cfg.Keys.Current.ID())
		}
		cfg.Keys = nil
		if _, err := store.Open(ctx, cfg); err == nil || !strings.Contains(err.Error(), "key-encryption key") {
			t.Errorf("open without keys: %v", err)
		}
	})
}

// A plain input whose value looks sealed is a value like any other: the
// install and the org's list still read, and give it back as given.
func TestPlainInputThatLooksSealed(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		const v = "osv1:abc:def"
		inst, _, _, err := f.s.CreateInstall(ctx, f.org.ID, f.inst.AppID, "looks-sealed",
			[]store.InstallInput{{Name: "motto", Value: v}, {Name: "secret", Value: v, Sensitive: true}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.s.GetInstall(ctx, f.org.ID, inst.ID)
		if err != nil {
			t.Fatalf("read the install: %v", err)
		}
		for _, in := range got.Inputs {
			if in.Value != v {
				t.Errorf("input %s reads %q, want %q", in.Name, in.Value, v)
			}
		}
		if _, err := f.s.ListInstalls(ctx, f.org.ID, ""); err != nil {
			t.Errorf("list the org's installs: %v", err)
		}
	})
}

// An input set plain that a later config declares sensitive is sealed when
// that config is deployed (the operation's start marks it), and reads back.
func TestInputsMarkedSensitiveAreSealed(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx := context.Background()
		s := storetest.Open(t, d)
		const later = "later-sensitive-pw-88c2"
		tn := storetest.NewTenant(t, s, store.InstallInput{Name: "api_key", Value: later}, store.InstallInput{Name: "region", Value: "eu"})
		if err := s.MarkInputsSensitive(ctx, tn.Install.ID, []string{"api_key", "unset"}); err != nil {
			t.Fatal(err)
		}
		inst, err := s.GetInstall(ctx, tn.Org.ID, tn.Install.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range inst.Inputs {
			if sensitive := in.Name == "api_key"; in.Sensitive != sensitive || (sensitive && in.Value != later) {
				t.Errorf("input %+v after marking api_key sensitive", in)
			}
		}
		// A pg_dump holds only live rows (SQLite's file keeps the old page
		// until it is reused: sealing later is no secure erase).
		if d == store.Postgres && bytes.Contains(storetest.DatabaseBytes(t, s), []byte(later)) {
			t.Error("the value marked sensitive is still in a dump of the database")
		}
	})
}

func all(values []string, ok func(string) bool) bool {
	return !slices.ContainsFunc(values, func(v string) bool { return !ok(v) })
}

// A debug command's logs (its output) are sealed at rest and read back
// whole; other jobs' logs are stored as they are.
func TestDebugCommandLogsAreSealed(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx := context.Background()
		f := newSealedFixture(t, d)
		const out = "PGPASSWORD=cmd-log-pw-93e0\n"
		cmd, _, err := f.s.EnqueueJob(ctx, store.JobSpec{Key: "install/x/command/1", OrgID: f.org.ID, RunnerID: f.runner.ID,
			InstallID: &f.inst.ID, Type: protocol.JobTypeCommand, Manifest: json.RawMessage(`{"args":["env"]}`)})
		if err != nil {
			t.Fatal(err)
		}
		f.claim(t, cmd.ID, time.Minute)
		chunks := []protocol.LogChunk{{Seq: 1, Stream: protocol.StreamStdout, Data: out, Time: time.Now()}}
		if _, err := f.s.AppendLogs(ctx, f.runner.ID, cmd.ID, 1, chunks, 0); err != nil {
			t.Fatal(err)
		}
		if got := storetest.JobLogs(t, f.s, cmd.ID); got != out {
			t.Errorf("the command's logs read %q, want %q", got, out)
		}
		var raw []string
		f.s.DB().Raw("SELECT data FROM job_log_chunks WHERE job_id = ?", cmd.ID).Scan(&raw)
		if len(raw) != 1 || !seal.IsSealed(raw[0]) {
			t.Errorf("the command's log is stored as %q; want it sealed", raw)
		}
	})
}
