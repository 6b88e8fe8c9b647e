package store

import (
	"fmt"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/store/seal"
)

// Secrets at rest: the columns that may hold secrets are sealed with their
// install's (or org's) data key by the models' hooks (BeforeCreate seals,
// AfterCreate and AfterFind open), and by the updates that set them. A
// value's place (table.column/row) is its associated data.
//
//	jobs.manifest, jobs.outputs, jobs.inputs   place: job ID
//	install_inputs.value (sensitive ones)      place: install ID/name
//	install_outputs.outputs                    place: install ID/name
//	terraform_state_versions.state             place: org ID/workspace/version
//	app_configs.content                        place: config ID (org's key)
//	install_commands.output, .error            place: command ID (install's key)
//	action_runs.sensitive_inputs               place: run ID (install's key)
//	action_run_steps.sensitive_outputs         place: run ID/step index (install's key)
//	job_log_chunks.data (debug commands')      place: job ID/attempt/seq (install's key)
//	registry_keys.key                          place: key ID (org's key)
//	release_keys.private_key                   place: org ID (org's key)
//	settings.value of oidc/<org> (client secret) place: settings.oidc/<org ID> (org's key)

// sealValue seals v for its place with the scope's data key ("" stays "").
func sealValue(tx *gorm.DB, scope, place, v string) (string, error) {
	if v == "" {
		return v, nil
	}
	keys, err := keysOf(tx)
	if err != nil {
		return "", err
	}
	id, key, err := keys.forScope(tx, scope)
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", place, err)
	}
	return seal.Seal(key, id, place, v)
}

// openValue opens a sealed value of its place; plaintext (written before
// sealing) is returned as it is.
func openValue(tx *gorm.DB, place, v string) (string, error) {
	if !seal.IsSealed(v) {
		return v, nil
	}
	keys, err := keysOf(tx)
	if err != nil {
		return "", err
	}
	id, err := seal.KeyID(v)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", place, err)
	}
	key, err := keys.byKeyID(tx, id)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", place, err)
	}
	pt, err := seal.Open(key, v, place)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", place, err)
	}
	return pt, nil
}

// sealFields seals or opens each field in place, stopping at an error.
func sealFields(tx *gorm.DB, scope string, open bool, fields map[string]*string) error {
	for place, p := range fields {
		if p == nil {
			continue
		}
		var err error
		if open {
			*p, err = openValue(tx, place, *p)
		} else {
			*p, err = sealValue(tx, scope, place, *p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func scopeOf(orgID string, installID *string) string {
	if installID != nil && *installID != "" {
		return *installID
	}
	return orgID
}

func jobPlace(column, id string) string { return "jobs." + column + "/" + id }

func (j *Job) sealed(tx *gorm.DB, open bool) error {
	return sealFields(tx, scopeOf(j.OrgID, j.InstallID), open, map[string]*string{
		jobPlace("manifest", j.ID): &j.Manifest, jobPlace("outputs", j.ID): &j.Outputs, jobPlace("inputs", j.ID): j.Inputs})
}

// BeforeCreate seals the job's manifest, outputs and inputs.
func (j *Job) BeforeCreate(tx *gorm.DB) error { return j.sealed(tx, false) }

// AfterCreate gives the caller its values back.
func (j *Job) AfterCreate(tx *gorm.DB) error { return j.sealed(tx, true) }

// AfterFind opens the values read.
func (j *Job) AfterFind(tx *gorm.DB) error { return j.sealed(tx, true) }

// Only sensitive values are sealed, so only they are opened: a plain value
// that happens to look sealed ("osv1:…") is a value like any other.
func (in *InstallInput) sealed(tx *gorm.DB, open bool) error {
	if !in.Sensitive {
		return nil
	}
	return sealFields(tx, in.InstallID, open, map[string]*string{"install_inputs.value/" + in.InstallID + "/" + in.Name: &in.Value})
}

// BeforeCreate seals a sensitive input's value.
func (in *InstallInput) BeforeCreate(tx *gorm.DB) error { return in.sealed(tx, false) }

// AfterCreate gives the caller its value back.
func (in *InstallInput) AfterCreate(tx *gorm.DB) error { return in.sealed(tx, true) }

// AfterFind opens the value read.
func (in *InstallInput) AfterFind(tx *gorm.DB) error { return in.sealed(tx, true) }

func (o *InstallOutput) sealed(tx *gorm.DB, open bool) error {
	return sealFields(tx, o.InstallID, open, map[string]*string{"install_outputs.outputs/" + o.InstallID + "/" + o.Name: &o.Outputs})
}

// BeforeCreate seals the outputs.
func (o *InstallOutput) BeforeCreate(tx *gorm.DB) error { return o.sealed(tx, false) }

// AfterCreate gives the caller its outputs back.
func (o *InstallOutput) AfterCreate(tx *gorm.DB) error { return o.sealed(tx, true) }

// AfterFind opens the outputs read.
func (o *InstallOutput) AfterFind(tx *gorm.DB) error { return o.sealed(tx, true) }

func (v *TerraformStateVersion) sealed(tx *gorm.DB, open bool) error {
	place := fmt.Sprintf("terraform_state_versions.state/%s/%s/%d", v.OrgID, v.Workspace, v.Version)
	return sealFields(tx, v.OrgID, open, map[string]*string{place: &v.State})
}

// BeforeCreate seals the state.
func (v *TerraformStateVersion) BeforeCreate(tx *gorm.DB) error { return v.sealed(tx, false) }

// AfterCreate gives the caller its state back.
func (v *TerraformStateVersion) AfterCreate(tx *gorm.DB) error { return v.sealed(tx, true) }

// AfterFind opens the state read.
func (v *TerraformStateVersion) AfterFind(tx *gorm.DB) error { return v.sealed(tx, true) }

func (c *AppConfig) sealed(tx *gorm.DB, open bool) error {
	return sealFields(tx, c.OrgID, open, map[string]*string{"app_configs.content/" + c.ID: &c.Content})
}

// BeforeCreate seals the config's archive.
func (c *AppConfig) BeforeCreate(tx *gorm.DB) error { return c.sealed(tx, false) }

// AfterCreate gives the caller its archive back.
func (c *AppConfig) AfterCreate(tx *gorm.DB) error { return c.sealed(tx, true) }

// AfterFind opens the archive read.
func (c *AppConfig) AfterFind(tx *gorm.DB) error { return c.sealed(tx, true) }

func commandPlace(column, id string) string { return "install_commands." + column + "/" + id }

func (c *InstallCommand) sealed(tx *gorm.DB, open bool) error {
	return sealFields(tx, c.InstallID, open, map[string]*string{
		commandPlace("output", c.ID): &c.Output, commandPlace("error", c.ID): &c.Error})
}

// BeforeCreate seals the command's output and error.
func (c *InstallCommand) BeforeCreate(tx *gorm.DB) error { return c.sealed(tx, false) }

// AfterCreate gives the caller its output back.
func (c *InstallCommand) AfterCreate(tx *gorm.DB) error { return c.sealed(tx, true) }

// AfterFind opens the output read.
func (c *InstallCommand) AfterFind(tx *gorm.DB) error { return c.sealed(tx, true) }

func chunkPlace(c *JobLogChunk) string {
	return fmt.Sprintf("job_log_chunks.data/%s/%d/%d", c.JobID, c.Attempt, c.Seq)
}

// sealChunks seals log chunks about to be stored, and marks them sealed.
func sealChunks(tx *gorm.DB, scope string, rows []JobLogChunk) error {
	for i := range rows {
		sealed, err := sealValue(tx, scope, chunkPlace(&rows[i]), rows[i].Data)
		if err != nil {
			return err
		}
		rows[i].Data, rows[i].Sealed = sealed, true
	}
	return nil
}

// AfterFind opens a sealed chunk's data.
func (c *JobLogChunk) AfterFind(tx *gorm.DB) error {
	if !c.Sealed {
		return nil
	}
	return sealFields(tx, "", true, map[string]*string{chunkPlace(c): &c.Data})
}
