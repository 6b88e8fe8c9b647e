package wire

// OIDCSettings is an org's single sign-on with an OpenID provider: the
// dashboard's "Sign in with SSO".
type OIDCSettings struct {
	// the provider's issuer URL (its discovery document is <issuer>/.well-known/openid-configuration)
	Issuer string `json:"issuer" required:"true"`
	// the client ID the provider gave the dashboard
	ClientID string `json:"client_id" required:"true"`
	// the client's secret: write-only (sealed at rest, never shown); left out on a PUT, the stored one is kept
	ClientSecret string `json:"client_secret,omitempty"`
	// whether a client secret is stored (answers only)
	HasClientSecret bool `json:"has_client_secret,omitempty"`
	// the dashboard's callback as registered at the provider: https://<api>/auth/oidc/callback
	RedirectURL string `json:"redirect_url" required:"true"`
	// the ID token's claim listing the person's groups (default groups)
	GroupsClaim string `json:"groups_claim,omitempty"`
	// scopes to ask for beside openid, profile and email (dex needs groups for its groups claim)
	Scopes []string `json:"scopes,omitempty"`
	// the roles each group gives; a person whose groups give none is refused
	Groups map[string][]RoleBinding `json:"groups" required:"true"`
	_      struct{}                 `additionalProperties:"false"`
}
