//! Which store a campaign runs against (a leaf: the worker, the mutants and the campaign all
//! name it).

/// Which store the workers share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Redis (`url` is a `redis://` URL).
    Redis,
    /// PostgreSQL (`url` is a `postgres://` URL).
    Postgres,
    /// SQLite (`url` is the database file).
    Sqlite,
}
