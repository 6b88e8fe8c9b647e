package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// StateResource is one resource of a terraform state.
type StateResource struct {
	// Address is its address: "module.m.type.name", "data.type.name".
	Address, Type, Mode string
	Instances           int
}

// StateResources reads a terraform JSON state: the terraform version that
// wrote it and its resources.
func StateResources(state string) (terraformVersion string, resources []StateResource, err error) {
	var st struct {
		TerraformVersion string `json:"terraform_version"`
		Resources        []struct {
			Module    string            `json:"module"`
			Mode      string            `json:"mode"`
			Type      string            `json:"type"`
			Name      string            `json:"name"`
			Instances []json.RawMessage `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(state), &st); err != nil {
		return "", nil, err
	}
	for _, r := range st.Resources {
		addr := r.Type + "." + r.Name
		if r.Mode == "data" {
			addr = "data." + addr
		}
		if r.Module != "" {
			addr = r.Module + "." + addr
		}
		resources = append(resources, StateResource{Address: addr, Type: r.Type, Mode: r.Mode, Instances: len(r.Instances)})
	}
	return st.TerraformVersion, resources, nil
}

// TerraformStateResources lists the managed resources in a workspace's
// latest state by address (with " (N instances)" when there are several);
// none when it has no state. Data sources are not listed: nothing of them
// exists to leave behind.
func (s *Store) TerraformStateResources(ctx context.Context, orgID, workspace string) ([]string, error) {
	v, err := s.GetTerraformState(ctx, orgID, workspace)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	_, resources, err := StateResources(v.State)
	if err != nil {
		return nil, fmt.Errorf("state of %s version %d: %w", workspace, v.Version, err)
	}
	var out []string
	for _, r := range resources {
		switch {
		case r.Mode != "managed" || r.Instances == 0:
		case r.Instances > 1:
			out = append(out, fmt.Sprintf("%s (%d instances)", r.Address, r.Instances))
		default:
			out = append(out, r.Address)
		}
	}
	return out, nil
}
