//! Redis backend (feature `redis`): JSON records plus a lexicographic sorted-set index,
//! both changed atomically by one Lua compare-and-set script.
//!
//! Layout (compatible with the reference): the record of operation key `k` lives at
//! `<prefix>record:<hex(utf8(k))>` as compact JSON; `<prefix>index` is a sorted set whose members
//! are the hex-encoded keys, all with score 0, so `ZRANGEBYLEX` walks keys in byte order.
//! The script runs with `EVALSHA` and falls back to `EVAL` (and `SCRIPT LOAD`) on `NOSCRIPT`.
//!
//! Durability is Redis's: a record survives a Redis restart only when the server persists each
//! write before answering (`appendonly yes`, `appendfsync always`). Without it the fault harness
//! (`durable-faults --redis-durability none`) sees acknowledged records lost on restart.

use async_trait::async_trait;
use redis::aio::ConnectionLike;

use super::{
    DecodedRow, DurableOperationBackend, RecordPage, check_cas_arguments, check_page_limit,
    page_from_rows,
};
use crate::error::DurableOperationError;
use crate::record::{Fence, OperationRecord};

/// Default key prefix.
pub const REDIS_DEFAULT_PREFIX: &str = "context-action:durable-operation:";
/// Maximum bytes of a key prefix.
pub const MAX_REDIS_PREFIX_BYTES: usize = 256;

/// The compare-and-set script: KEYS = record, index; ARGV = expected incarnation (`''` =
/// insert-only), expected revision, next record JSON (`''` = delete), index member.
pub const REDIS_DURABLE_OPERATION_CAS_SCRIPT: &str = r#"
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '' then
  if current then return 0 end
else
  if not current then return 0 end
  local decoded = cjson.decode(current)
  if decoded.incarnation ~= ARGV[1] then return 0 end
  if tonumber(decoded.revision) ~= tonumber(ARGV[2]) then return 0 end
end
if ARGV[3] == '' then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[4])
else
  redis.call('SET', KEYS[1], ARGV[3])
  redis.call('ZADD', KEYS[2], 0, ARGV[4])
end
return 1
"#;

/// The legacy backfill script: KEYS = record; ARGV = incarnation. Sets it only on a record
/// without one (0 otherwise). The incarnation is spliced in as text after the opening brace, so
/// the rest of the stored JSON (number precision, empty arrays) stays byte for byte.
pub const REDIS_LEGACY_INCARNATION_BACKFILL_SCRIPT: &str = r#"
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, decoded = pcall(cjson.decode, current)
if not ok or type(decoded) ~= 'table' or decoded.key == nil then return 0 end
if decoded.incarnation ~= nil then return 0 end
local open = string.find(current, '{', 1, true)
local field = '"incarnation":' .. cjson.encode(ARGV[1]) .. ','
redis.call('SET', KEYS[1], string.sub(current, 1, open) .. field .. string.sub(current, open + 1))
return 1
"#;

const NAME: &str = "redis";

/// Operation records in Redis over any async connection that can be cloned cheaply:
/// a single [`MultiplexedConnection`](redis::aio::MultiplexedConnection) or a reconnecting
/// [`ConnectionManager`](redis::aio::ConnectionManager).
#[derive(Clone)]
pub struct RedisBackend<C> {
    connection: C,
    prefix: String,
    index_key: String,
    script: redis::Script,
    backfill: redis::Script,
}

impl<C> std::fmt::Debug for RedisBackend<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBackend")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisBackend<redis::aio::ConnectionManager> {
    /// Connects a reconnecting [`ConnectionManager`](redis::aio::ConnectionManager) to `url`
    /// and uses `prefix`.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, DurableOperationError> {
        let client = redis::Client::open(url).map_err(redis_error)?;
        let manager = client.get_connection_manager().await.map_err(redis_error)?;
        Self::with_prefix(manager, prefix)
    }
}

impl<C> RedisBackend<C>
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    /// A backend under the default prefix.
    pub fn new(connection: C) -> Self {
        Self::build(connection, REDIS_DEFAULT_PREFIX.to_owned())
    }

    /// A backend under `prefix` (non-blank, at most [`MAX_REDIS_PREFIX_BYTES`]).
    pub fn with_prefix(connection: C, prefix: &str) -> Result<Self, DurableOperationError> {
        crate::record::validate_text("prefix", prefix, MAX_REDIS_PREFIX_BYTES)?;
        Ok(Self::build(connection, prefix.to_owned()))
    }

    fn build(connection: C, prefix: String) -> Self {
        Self {
            connection,
            index_key: format!("{prefix}index"),
            prefix,
            script: redis::Script::new(REDIS_DURABLE_OPERATION_CAS_SCRIPT),
            backfill: redis::Script::new(REDIS_LEGACY_INCARNATION_BACKFILL_SCRIPT),
        }
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The sorted-set index key.
    pub fn index_key(&self) -> &str {
        &self.index_key
    }

    /// The Redis key holding the record of operation `key`.
    pub fn record_key(&self, key: &str) -> String {
        self.record_key_for_member(&hex::encode(key))
    }

    fn record_key_for_member(&self, member: &str) -> String {
        format!("{}record:{member}", self.prefix)
    }
}

fn redis_error(error: redis::RedisError) -> DurableOperationError {
    DurableOperationError::backend(NAME, error)
}

fn decode(stored: Option<String>) -> Result<Option<OperationRecord>, DurableOperationError> {
    stored
        .as_deref()
        .map(OperationRecord::from_json)
        .transpose()
}

/// The operation key of an index member (the member itself if it is not hex of UTF-8).
fn operation_key(member: &str) -> String {
    hex::decode(member)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| member.to_owned())
}

/// Rejects cursors that are not index members (lowercase hex).
fn check_cursor(cursor: &str) -> Result<(), DurableOperationError> {
    if cursor.is_empty()
        || !cursor
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(DurableOperationError::invalid(
            "cursor",
            "must be a Redis index member (lowercase hex)",
        ));
    }
    Ok(())
}

#[async_trait]
impl<C> DurableOperationBackend for RedisBackend<C>
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    fn name(&self) -> &'static str {
        NAME
    }

    async fn ping(&self) -> Result<(), DurableOperationError> {
        let mut connection = self.connection.clone();
        let _: String = redis::cmd("PING")
            .query_async(&mut connection)
            .await
            .map_err(redis_error)?;
        Ok(())
    }

    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        let mut connection = self.connection.clone();
        let stored: Option<String> = redis::cmd("GET")
            .arg(self.record_key(key))
            .query_async(&mut connection)
            .await
            .map_err(redis_error)?;
        decode(stored)
    }

    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        check_cas_arguments(key, next)?;
        if expected.is_none() && next.is_none() {
            return Ok(false);
        }
        let next_json = next
            .map(OperationRecord::to_json)
            .transpose()?
            .unwrap_or_default();
        let member = hex::encode(key);
        let mut connection = self.connection.clone();
        let written: i64 = self
            .script
            .key(self.record_key_for_member(&member))
            .key(&self.index_key)
            .arg(expected.map_or("", |f| f.incarnation.as_str()))
            .arg(expected.map_or(String::new(), |f| f.revision.to_string()))
            .arg(next_json)
            .arg(member)
            .invoke_async(&mut connection)
            .await
            .map_err(redis_error)?;
        Ok(written == 1)
    }

    async fn backfill_legacy_incarnation(
        &self,
        key: &str,
        incarnation: &str,
    ) -> Result<bool, DurableOperationError> {
        crate::record::validate_key(key)?;
        crate::record::validate_incarnation(incarnation)?;
        let mut connection = self.connection.clone();
        let written: i64 = self
            .backfill
            .key(self.record_key(key))
            .arg(incarnation)
            .invoke_async(&mut connection)
            .await
            .map_err(redis_error)?;
        Ok(written == 1)
    }

    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError> {
        check_page_limit(limit)?;
        let min = match cursor {
            Some(cursor) => {
                check_cursor(cursor)?;
                format!("({cursor}")
            }
            None => "-".to_owned(),
        };
        let mut connection = self.connection.clone();
        let mut members: Vec<String> = redis::cmd("ZRANGEBYLEX")
            .arg(&self.index_key)
            .arg(min)
            .arg("+")
            .arg("LIMIT")
            .arg(0)
            .arg(limit + 1)
            .query_async(&mut connection)
            .await
            .map_err(redis_error)?;
        if members.is_empty() {
            return Ok(RecordPage::default());
        }
        // The extra member only signals that more follow: its record is not fetched.
        let more = members.len() > limit;
        members.truncate(limit);
        let keys: Vec<String> = members
            .iter()
            .map(|m| self.record_key_for_member(m))
            .collect();
        let stored: Vec<Option<String>> = redis::cmd("MGET")
            .arg(keys)
            .query_async(&mut connection)
            .await
            .map_err(redis_error)?;
        let cursor_member = more.then(|| members.last().cloned()).flatten();
        // A record deleted between the two commands is simply skipped.
        let rows: Vec<DecodedRow> = members
            .into_iter()
            .zip(stored)
            .filter_map(|(member, value)| {
                let decoded = decode(value).transpose()?;
                Some((member, decoded))
            })
            .collect();
        let mut page = page_from_rows(rows, limit);
        page.next_cursor = cursor_member;
        for corrupt in &mut page.corrupt {
            corrupt.key = operation_key(&corrupt.key);
        }
        Ok(page)
    }
}
