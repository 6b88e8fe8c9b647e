package runner

import (
	"context"
	"path/filepath"

	"github.com/outpost-dev/outpost/protocol"
)

// uploadBundle sends the archive a support job left in its directory, before its completion: a
// support job succeeds only once the control plane holds its bundle. The archive is already redacted
// (the job process did it).
func (s *supervisor) uploadBundle(ctx context.Context, req protocol.CompleteRequest) protocol.CompleteRequest {
	path := filepath.Join(s.dir, protocol.SupportBundleFile)
	_, err := retry(ctx, s.retry, s.log, "uploading the support bundle", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.gw.UploadBundle(ctx, s.job.ID, s.job.Attempt, path)
	})
	if err != nil {
		s.log.Error("the support bundle could not be uploaded", "err", err)
		req.Status, req.Error = protocol.StatusFailed, "runner: uploading the support bundle: "+err.Error()
		return req
	}
	s.log.Info("support bundle uploaded")
	return req
}
