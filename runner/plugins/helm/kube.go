package helm

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeGetter gives helm its clients from a kubeconfig held in memory: the
// kubeconfig (a secret) is never written to disk. Namespace is the default
// namespace of everything helm does, as `helm --namespace` sets it.
type kubeGetter struct {
	loader clientcmd.ClientConfig
	config *rest.Config

	once      sync.Once
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
	err       error
}

var _ genericclioptions.RESTClientGetter = (*kubeGetter)(nil)

// parseKubeconfig checks a kubeconfig. Its errors never quote the
// kubeconfig: a YAML parser's message may hold a piece of it (a token).
func parseKubeconfig(kubeconfig string) (*clientcmdapi.Config, error) {
	raw, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: not a valid kubeconfig file (YAML or JSON)")
	}
	cc := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{})
	if _, err := cc.ClientConfig(); err != nil {
		return nil, fmt.Errorf("kubeconfig: %s", describeConfigError(raw))
	}
	return raw, nil
}

// describeConfigError says what is missing in a kubeconfig without quoting
// it.
func describeConfigError(raw *clientcmdapi.Config) string {
	ctx, ok := raw.Contexts[raw.CurrentContext]
	switch {
	case raw.CurrentContext == "":
		return "has no current-context"
	case !ok:
		return fmt.Sprintf("current-context %q is not among its contexts", raw.CurrentContext)
	case raw.Clusters[ctx.Cluster] == nil:
		return fmt.Sprintf("context %q names cluster %q, which it does not define", raw.CurrentContext, ctx.Cluster)
	case raw.Clusters[ctx.Cluster].Server == "":
		return fmt.Sprintf("cluster %q has no server", ctx.Cluster)
	}
	return "cannot be turned into a client configuration (check its cluster, user and certificates)"
}

func newKubeGetter(raw *clientcmdapi.Config, namespace string) (*kubeGetter, error) {
	loader := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{
		Context: clientcmdapi.Context{Namespace: namespace},
	})
	config, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %s", describeConfigError(raw))
	}
	// helm's own CLI raises client-go's defaults (5 QPS) as well.
	config.QPS, config.Burst = 50, 100
	return &kubeGetter{loader: loader, config: config}, nil
}

func (g *kubeGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

func (g *kubeGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	g.init()
	return g.discovery, g.err
}

func (g *kubeGetter) ToRESTMapper() (meta.RESTMapper, error) {
	g.init()
	return g.mapper, g.err
}

func (g *kubeGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig { return g.loader }

// init makes one cached discovery client and mapper, which helm resets after
// it installs CRDs.
func (g *kubeGetter) init() {
	g.once.Do(func() {
		dc, err := discovery.NewDiscoveryClientForConfig(rest.CopyConfig(g.config))
		if err != nil {
			g.err = err
			return
		}
		g.discovery = memory.NewMemCacheClient(dc)
		g.mapper = restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(g.discovery), g.discovery, nil)
	})
}

// ClientGetter parses a kubeconfig held in memory and returns helm's client getter (namespace: the
// default one) and its REST config, for other plugins that read the install's cluster (support
// bundles). Its errors never quote the kubeconfig.
func ClientGetter(kubeconfig, namespace string) (genericclioptions.RESTClientGetter, *rest.Config, error) {
	raw, err := parseKubeconfig(kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	g, err := newKubeGetter(raw, namespace)
	if err != nil {
		return nil, nil, err
	}
	return g, rest.CopyConfig(g.config), nil
}

// StorageDriver is where helm keeps releases (Secrets in the release's namespace).
const StorageDriver = storageDriver
