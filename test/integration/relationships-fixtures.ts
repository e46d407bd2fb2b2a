// Shared by the accounts/follows/relationships/blocks/mutes tests.

