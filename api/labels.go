package api

import (
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
)

// An install's labels select it in a release (installs.selector). They are
// Kubernetes labels: a key is a qualified name with an optional DNS
// subdomain prefix, a value 63 characters at most of [a-z0-9A-Z-_.].

// checkLabels validates labels; the 400 names field.<key>.
func checkLabels(field string, labels map[string]string) error {
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return apierr.Invalid(fmt.Sprintf("%s.%s", field, k), "%q is not a label key: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return apierr.Invalid(fmt.Sprintf("%s.%s", field, k), "%q is not a label value: %s", v, strings.Join(errs, "; "))
		}
	}
	return nil
}

// patchLabels sets and removes some of an install's labels.
func (s *Server) patchLabels(c echo.Context) error {
	var req wire.PatchLabelsRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if err := checkLabels("set", req.Set); err != nil {
		return err
	}
	ctx, org := c.Request().Context(), orgID(c)
	inst, err := s.store.GetInstall(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	labels := maps.Clone(inst.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, req.Set)
	for i, k := range req.Remove {
		if _, ok := labels[k]; !ok {
			return apierr.Invalid(fmt.Sprintf("remove[%d]", i), "the install has no label %q", k)
		}
		delete(labels, k)
	}
	return s.saveLabels(c, inst.ID, labels)
}

// putLabels replaces an install's labels.
func (s *Server) putLabels(c echo.Context) error {
	var req wire.PutLabelsRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if err := checkLabels("labels", req.Labels); err != nil {
		return err
	}
	return s.saveLabels(c, c.Param("id"), labelsView(req.Labels))
}

func (s *Server) saveLabels(c echo.Context, id string, labels map[string]string) error {
	inst, err := s.store.SetInstallLabels(c.Request().Context(), orgID(c), id, labels)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, installView(inst, nil))
}

// labelsView is labels as an answer shows them: {} for none.
func labelsView(labels map[string]string) wire.Labels {
	if labels == nil {
		return wire.Labels{}
	}
	return labels
}
