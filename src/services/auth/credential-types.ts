// The types of a credentials check (src/oauth/credentials.ts), apart so that the factor checkers it calls
// (two-factor.ts) can name them without importing it back.

/** What the request gave; a factor's key present means it is checked (an absent value is a wrong one). */
export type CredentialsGiven = { password: unknown; otp?: unknown } | { otp: unknown };

/** Handed to a service: checks the given factors (throws 429 past a budget); true when every one is right. */
export type CheckCredentials = (given: CredentialsGiven) => Promise<boolean>;
