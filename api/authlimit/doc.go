// Package authlimit slows down the guessing of tokens: it counts failed
// authentications per source address and per token prefix, and refuses
// (429 with Retry-After) a source or prefix that failed too often.
//
// Each key has a token bucket of Burst failures that refills one failure
// per Every. Only failures take from it: a valid credential is never counted,
// and is refused only while its own source or prefix is over the limit. The
// buckets live in memory, per process: with several API or gateway replicas
// each keeps its own, so the whole deployment allows replicas × Burst.
package authlimit
