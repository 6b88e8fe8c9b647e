package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	opstorage "github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"

	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/dashboard"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// ssoPassword is every test person's password at the OpenID provider.
const ssoPassword = "very-secure-1"

// ssoUsers are the provider's people: a name, its groups.
var ssoUsers = map[string][]string{"ops-user": {"ops"}, "guest-user": {"guests"}}

// ssoUserStore is the example provider's user store holding ssoUsers.
type ssoUserStore struct{}

func (ssoUserStore) GetUserByID(id string) *opstorage.User {
	return ssoUserStore{}.GetUserByUsername(id)
}
func (ssoUserStore) ExampleClientID() string { return opstorage.ServiceUserID }
func (ssoUserStore) GetUserByUsername(name string) *opstorage.User {
	if _, ok := ssoUsers[name]; !ok {
		return nil
	}
	return &opstorage.User{ID: name, Username: name, Password: ssoPassword, Email: name + "@vendor.test",
		EmailVerified: true, PreferredLanguage: language.English}
}

// groupsStorage is the example provider's storage with a groups claim in
// the ID token.
type groupsStorage struct{ *opstorage.Storage }

func (s groupsStorage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, req, scopes); err != nil {
		return err
	}
	ui.AppendClaims("groups", ssoUsers[req.GetSubject()])
	return nil
}

// ssoStack is the API with the dashboard, org acme, and a real OpenID
// provider (zitadel/oidc's example OP, with its login page) that acme
// signs in with: group ops gives operator.
type ssoStack struct {
	apiURL, issuer string
	admin          store.OrgAdmin
}

func newSSOStack(t *testing.T) ssoStack {
	t.Helper()
	s := storetest.Open(t, store.Postgres)
	admin, err := s.CreateOrgWithAdmin(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	a := api.New(api.Config{Store: s})
	h := a.Handler()
	dashboard.Register(h, dashboard.Config{Sessions: a})
	apiSrv := httptest.NewServer(h)
	t.Cleanup(apiSrv.Close)

	opSrv := httptest.NewUnstartedServer(nil)
	opSrv.Start()
	t.Cleanup(opSrv.Close)
	callback := apiSrv.URL + "/auth/oidc/callback"
	clients := map[string]*opstorage.Client{"outpost": opstorage.WebClient("outpost", "client-5ecret", callback)}
	opSrv.Config.Handler = exampleop.SetupServer(opSrv.URL, groupsStorage{opstorage.NewStorageWithClients(ssoUserStore{}, clients)}, nil, false)

	st := ssoStack{apiURL: apiSrv.URL, issuer: opSrv.URL, admin: admin}
	if got := st.get(t, "/auth/oidc/status?org=acme"); !strings.Contains(got, `"sso":false`) {
		t.Fatalf("acme's SSO before its settings: %s", got)
	}
	body := fmt.Sprintf(`{"issuer": %q, "client_id": "outpost", "client_secret": "client-5ecret", "redirect_url": %q,
		"groups": {"ops": [{"role": "operator"}]}}`, opSrv.URL, callback)
	for _, c := range [][2]string{{"PUT", body}, {"GET", ""}} {
		method := c[0]
		if got := st.call(t, method, "/v1/settings/oidc", c[1], 200); strings.Contains(got, "client-5ecret") || !strings.Contains(got, `"has_client_secret":true`) {
			t.Fatalf("%s /v1/settings/oidc answered %s", method, got)
		}
	}
	if got := st.get(t, "/auth/oidc/status?org=acme"); !strings.Contains(got, `"sso":true`) {
		t.Fatalf("acme's SSO after its settings: %s", got)
	}
	if got := st.get(t, "/auth/oidc/status?org=nope"); !strings.Contains(got, `"sso":false`) {
		t.Fatalf("an unknown org's SSO: %s", got)
	}
	return st
}

// call calls the API as acme's admin (its token), wanting status; the body.
func (st ssoStack) call(t *testing.T, method, path, body string, status int) string {
	t.Helper()
	req, _ := http.NewRequest(method, st.apiURL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+st.admin.Token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, b, status)
	}
	return string(b)
}

// In chromium: the sign-in page offers SSO once acme is typed (or given
// in the address), the provider's own
// login page signs ops-user in, and the dashboard is back signed in as
// ops-user with the role group ops gives (operator): it may create an
// app, not list the org's users (admin).
func TestSignInWithSSOInBrowser(t *testing.T) {
	st := newSSOStack(t)
	b := newBrowser(t)
	b.run(time.Minute, chromedp.Navigate(st.apiURL+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#signin-org")))
	if eval[bool](b, `document.getElementById("signin-sso").checkVisibility()`) {
		t.Fatal("the SSO link shows before an org is typed")
	}
	b.run(time.Minute, chromedp.SendKeys(chromedp.CSS("#signin-org"), "acme"))
	b.text("#signin-sso", "Sign in with SSO", time.Minute) // typing an org with SSO shows it
	b.run(time.Minute, chromedp.Navigate(st.apiURL+"/ui/?org=acme"))
	b.click("#signin-sso")
	b.run(time.Minute, chromedp.WaitVisible(chromedp.CSS("#username")))
	if url := eval[string](b, "location.href"); !strings.HasPrefix(url, st.issuer+"/login/") {
		t.Fatalf("SSO went to %s, not the provider's login page", url)
	}
	b.run(time.Minute, chromedp.SendKeys(chromedp.CSS("#username"), "ops-user"),
		chromedp.SendKeys(chromedp.CSS("#password"), ssoPassword), chromedp.Click(chromedp.CSS(`button[type="submit"]`)))
	b.text("#org", "acme", time.Minute)
	if url := eval[string](b, "location.href"); !strings.HasPrefix(url, st.apiURL+"/ui/") {
		t.Fatalf("after SSO the browser is at %s", url)
	}
	me := eval[string](b, `fetch("/v1/me").then(r => r.text())`)
	if !strings.Contains(me, `"role":"operator"`) || strings.Contains(me, `"role":"admin"`) {
		t.Fatalf("GET /v1/me after SSO: %s", me)
	}
	create := `fetch("/ui/session").then(r => r.json()).then(s => fetch("/v1/apps", {method: "POST",
		headers: {"Content-Type": "application/json", "X-Outpost-CSRF": s.csrf_token}, body: '{"name": "shop"}'})).then(r => r.status)`
	if status := eval[int](b, create); status != 201 {
		t.Fatalf("an operator's POST /v1/apps: %d, want 201", status)
	}
	if status := eval[int](b, `fetch("/v1/users").then(r => r.status)`); status != 403 {
		t.Fatalf("an operator's GET /v1/users: %d, want 403", status)
	}
	users := st.call(t, "GET", "/v1/users", "", 200)
	if !regexp.MustCompile(`"name":"ops-user-vendor.test","email":"ops-user@vendor.test","kind":"person","external":true,"roles":\[\{"role":"operator"\}\]`).MatchString(users) {
		t.Fatalf("the users after SSO: %s", users)
	}
}

// get is the body of a GET without credentials (200 wanted).
func (st ssoStack) get(t *testing.T, path string) string {
	t.Helper()
	res, err := http.Get(st.apiURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	return string(b)
}

// ssoClient is a browser without JavaScript: cookies, redirects followed.
func ssoClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: time.Minute}
}

// ssoLogin starts acme's SSO with c and signs in at the provider as user;
// the last answer's status and body.
func ssoLogin(t *testing.T, st ssoStack, c *http.Client, user string) (int, string) {
	t.Helper()
	res, err := c.Get(st.apiURL + "/auth/oidc/login?org=acme")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="id" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the provider's login page (%d) has no request id:\n%s", res.StatusCode, page)
	}
	res, err = c.PostForm(st.issuer+"/login/username", url.Values{"id": {string(m[1])}, "username": {user}, "password": {ssoPassword}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func hasSession(c *http.Client, apiURL string) bool {
	u, _ := url.Parse(apiURL)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == api.SessionCookie {
			return true
		}
	}
	return false
}

// A callback whose state is not the one the browser's sign-in started is
// refused with a page saying so, and starts no session; so is a person
// whose groups give no role.
func TestSSORefusals(t *testing.T) {
	st := newSSOStack(t)

	c := ssoClient(t)
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Path == "/auth/oidc/callback" { // the provider sends the code back: change its state
			q := req.URL.Query()
			q.Set("state", "not-the-state")
			req.URL.RawQuery = q.Encode()
		}
		return nil
	}
	status, page := ssoLogin(t, st, c, "ops-user")
	if status != http.StatusBadRequest || !strings.Contains(page, "state does not match") {
		t.Fatalf("a callback with a wrong state: %d\n%s", status, page)
	}
	if hasSession(c, st.apiURL) {
		t.Fatal("a callback with a wrong state started a session")
	}

	c = ssoClient(t)
	status, page = ssoLogin(t, st, c, "guest-user")
	if status != http.StatusForbidden || !strings.Contains(page, "Your groups (guests) give no role in this org") {
		t.Fatalf("a person whose groups give no role: %d\n%s", status, page)
	}
	if hasSession(c, st.apiURL) {
		t.Fatal("a person whose groups give no role got a session")
	}
	if users := st.call(t, "GET", "/v1/users", "", 200); strings.Contains(users, "guest-user") {
		t.Fatalf("a person refused was made a user: %s", users)
	}

	// The same flow for ops-user signs in: the refusals above are not the flow failing.
	c = ssoClient(t)
	if status, page = ssoLogin(t, st, c, "ops-user"); status != http.StatusOK || !hasSession(c, st.apiURL) {
		t.Fatalf("ops-user's SSO: %d, session %v\n%s", status, hasSession(c, st.apiURL), page)
	}
}
