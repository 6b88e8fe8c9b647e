package wire

import "time"

// CreateAppRequest creates an app.
type CreateAppRequest struct {
	Name        string   `json:"name" required:"true"`
	Description string   `json:"description"`
	_           struct{} `additionalProperties:"false"`
}

// App is the vendor's product.
type App struct {
	ID          string `json:"id" required:"true"`
	OrgID       string `json:"org_id" required:"true"`
	Name        string `json:"name" required:"true"`
	Description string `json:"description" required:"true"`
	// the user who started an operation cannot approve its plans
	FourEyes  bool      `json:"four_eyes" required:"true"`
	CreatedAt time.Time `json:"created_at" required:"true"`
	UpdatedAt time.Time `json:"updated_at" required:"true"`
}

// AppList is the org's apps.
type AppList struct {
	Apps []App `json:"apps" required:"true"`
}

// CreateComponentRequest adds a component to an app.
type CreateComponentRequest struct {
	Name string `json:"name" required:"true"`
	Type string `json:"type" required:"true" enum:"terraform_module,helm_chart,container_image,docker_build"`
	// names of components of the same app
	Dependencies []string       `json:"dependencies"`
	Config       map[string]any `json:"config"`
	_            struct{}       `additionalProperties:"false"`
}

// Component is one deployable part of an app.
type Component struct {
	ID           string         `json:"id" required:"true"`
	OrgID        string         `json:"org_id" required:"true"`
	AppID        string         `json:"app_id" required:"true"`
	Name         string         `json:"name" required:"true"`
	Type         string         `json:"type" required:"true"`
	Dependencies []string       `json:"dependencies" required:"true"`
	Config       map[string]any `json:"config" required:"true"`
	CreatedAt    time.Time      `json:"created_at" required:"true"`
	UpdatedAt    time.Time      `json:"updated_at" required:"true"`
}

// ComponentList is an app's components.
type ComponentList struct {
	Components []Component `json:"components" required:"true"`
}

// FourEyes sets whether the user who started an operation may approve its
// plans.
type FourEyes struct {
	FourEyes bool     `json:"four_eyes" required:"true"`
	_        struct{} `additionalProperties:"false"`
}
