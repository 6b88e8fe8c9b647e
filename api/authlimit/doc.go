// Package authlimit answers the guessing of tokens: it counts failed
// authentications per source address and per token prefix, and answers a
// failure from a source or prefix that failed too often with 429 and
// Retry-After instead of 401.
//
// Each key has a token bucket of Burst failures that refills one failure
// per Every. Only failures take from it, and every token is checked: a
// valid credential is never counted and never refused, so clients that
// share an address with a guesser (behind one proxy or NAT) keep working.
// Guessing a 256-bit token is beyond reach anyway; what the limit adds is
// that a client that keeps failing is told to back off. The buckets live in
// memory, per process: with several API or gateway replicas each keeps its
// own, so the whole deployment allows replicas × Burst.
package authlimit
