package gateway

// ClaimOne is claimOne, for the tests of a claim whose runner went away.
var ClaimOne = (*Gateway).claimOne
