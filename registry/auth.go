package registry

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/distribution/distribution/v3/registry/auth"
)

// Access is one thing a request needs: an action on a resource. For
// repositories, Type is "repository", Name the repository and Action "pull",
// "push" or "delete". Listing the catalog is {Type: "registry", Name:
// "catalog", Action: "*"}.
type Access struct {
	Type   string
	Name   string
	Action string
}

// Authorizer decides whether a basic-auth credential may do everything a
// request needs. It is called for every request, including the API base
// "/v2/" (with no accesses, which only checks the credential). An error
// refuses the request with 401 and a Basic challenge, so clients retry with
// credentials; it must never contain the password. ctx is the request's: a
// lookup stops when the client goes away.
type Authorizer interface {
	Authorize(ctx context.Context, username, password string, access []Access) error
}

// Static is one basic-auth user who may do everything: an install's own
// registry, whose credential comes from its sandbox.
type Static struct {
	Username string
	Password string
}

// Authorize checks the user and password in constant time.
func (s Static) Authorize(_ context.Context, username, password string, _ []Access) error {
	userOK := subtle.ConstantTimeCompare([]byte(username), []byte(s.Username))
	passOK := subtle.ConstantTimeCompare([]byte(password), []byte(s.Password))
	if s.Username == "" || userOK&passOK != 1 {
		return errBadCredential
	}
	return nil
}

var errBadCredential = errors.New("invalid username or password")

// The access controller distribution calls. distribution looks controllers
// up by name and builds them from an options map; the map carries the live
// Authorizer of the registry being configured.
const (
	controllerName   = "outpost"
	controllerOption = "authorizer"
	realm            = "outpost"
)

var registerOnce sync.Once

func registerController() {
	registerOnce.Do(func() {
		err := auth.Register(controllerName, func(options map[string]any) (auth.AccessController, error) {
			a, ok := options[controllerOption].(Authorizer)
			if !ok {
				return nil, fmt.Errorf("option %q: not a registry.Authorizer", controllerOption)
			}
			return controller{a}, nil
		})
		if err != nil {
			panic(fmt.Sprintf("registering the registry's access controller: %v", err))
		}
	})
}

type controller struct{ authorizer Authorizer }

func (c controller) Authorized(r *http.Request, access ...auth.Access) (*auth.Grant, error) {
	username, password, ok := r.BasicAuth()
	if !ok {
		return nil, challenge{errors.New("no basic-auth credential")}
	}
	wanted := make([]Access, len(access))
	for i, a := range access {
		wanted[i] = Access{Type: a.Type, Name: a.Name, Action: a.Action}
	}
	if err := c.authorizer.Authorize(r.Context(), username, password, wanted); err != nil {
		return nil, challenge{err}
	}
	resources := make([]auth.Resource, len(access))
	for i, a := range access {
		resources[i] = a.Resource
	}
	return &auth.Grant{User: auth.UserInfo{Name: username}, Resources: resources}, nil
}

// challenge refuses a request with 401 and asks for basic auth.
type challenge struct{ err error }

func (ch challenge) SetHeaders(_ *http.Request, w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q", realm))
}

func (ch challenge) Error() string { return "registry authorization: " + ch.err.Error() }

func (ch challenge) Unwrap() error { return ch.err }
