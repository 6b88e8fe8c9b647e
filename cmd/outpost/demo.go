package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/outpost-dev/outpost/contract/status"
)

// provisionExample syncs the example app config to the demo app through the
// API, as a user would, and provisions the demo install if it never was.
func provisionExample(ctx context.Context, log *slog.Logger, apiURL string, b bootResult, dir string) error {
	archive, err := exampleArchive(dir)
	if err != nil {
		return err
	}
	call := func(method, path, contentType string, body []byte, out any) (int, error) {
		req, err := http.NewRequestWithContext(ctx, method, apiURL+path, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+b.token)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		if out != nil {
			return resp.StatusCode, json.Unmarshal(raw, out)
		}
		return resp.StatusCode, nil
	}
	var cfg struct {
		Version int `json:"version"`
	}
	if _, err := call("POST", "/v1/apps/"+b.appID+"/configs", "application/gzip", archive, &cfg); err != nil {
		return err
	}
	var inst struct {
		Status status.Install `json:"status"`
	}
	if _, err := call("GET", "/v1/installs/"+b.installID, "application/json", nil, &inst); err != nil {
		return err
	}
	if inst.Status != status.InstallCreated {
		log.Info("dev: example app synced; the demo install was provisioned before", "config_version", cfg.Version, "install_status", inst.Status)
		return nil
	}
	var op struct {
		ID         string `json:"id"`
		WorkflowID string `json:"workflow_id"`
	}
	if _, err := call("POST", "/v1/installs/"+b.installID+"/provision", "application/json", []byte("{}"), &op); err != nil {
		return err
	}
	log.Info("dev: provisioning the demo install", "operation", op.ID, "workflow", op.WorkflowID, "config_version", cfg.Version)
	return nil
}
