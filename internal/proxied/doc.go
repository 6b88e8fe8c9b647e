// Package proxied tells clients apart behind TCP load balancers that send
// the PROXY protocol (v1 or v2, github.com/pires/go-proxyproto): a listener
// wrapped by Trusted.Listen takes the client's address from the header a
// trusted peer sends first on each connection, so that http.Request's
// RemoteAddr, the failed-authentication limit (api/authlimit) and the logs
// name the client, not the load balancer.
//
// Only the peers in the list are believed, and they must send the header
// (a client cannot slip one of its own through a balancer that always
// sends its own first); any other peer's connection is served as it
// comes, so a header it sends is not read as one (HTTP answers it 400).
// A list entry is a CIDR, an address, or a host name (a compose service
// such as lb), resolved again when a connection comes from an address the
// last resolution did not give, at most once a second.
package proxied
