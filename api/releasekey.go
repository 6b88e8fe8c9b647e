package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/store"
)

// releaseKeyView shows a release key's public half.
func releaseKeyView(k store.ReleaseKey) (wire.ReleaseKey, error) {
	pub, err := k.PublicKeyBytes()
	if err != nil {
		return wire.ReleaseKey{}, err
	}
	pemText, err := releasebundle.PublicKeyPEM(pub)
	if err != nil {
		return wire.ReleaseKey{}, err
	}
	return wire.ReleaseKey{KeyID: k.KeyID, Algorithm: "ed25519", PublicKey: k.PublicKey, PublicKeyPEM: pemText,
		CreatedAt: k.CreatedAt}, nil
}

// getReleaseKey answers the org's release public key; 404 before it has one.
func (s *Server) getReleaseKey(c echo.Context) error {
	k, err := s.store.ReleasePublicKey(c.Request().Context(), orgID(c))
	if errors.Is(err, store.ErrNotFound) {
		return apierr.New(http.StatusNotFound, protocol.CodeNotFound, "",
			"the org has no release key yet: POST /v1/settings/release-key makes it (so does the first bundle export)")
	}
	return answerReleaseKey(c, k, err)
}

// createReleaseKey makes the org's release key unless it has one, and
// answers its public half.
func (s *Server) createReleaseKey(c echo.Context) error {
	k, _, err := s.store.ReleaseKey(c.Request().Context(), orgID(c))
	return answerReleaseKey(c, k, err)
}

// answerReleaseKey answers the public half of the key read (unless err).
func answerReleaseKey(c echo.Context, k store.ReleaseKey, err error) error {
	if err != nil {
		return err
	}
	v, err := releaseKeyView(k)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}
