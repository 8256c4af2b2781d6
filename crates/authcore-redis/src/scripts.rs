//! Lua scripts for the operations that touch several keys. Redis runs a script atomically,
//! so an index never points at a half-written record and two callers never both win a
//! uniqueness check. Scripts name some keys through `ARGV` (index keys, set members), so
//! this adapter targets a single Redis server (or a primary with replicas), not Redis
//! Cluster.

use std::sync::LazyLock;

use redis::Script;

/// `createUser`: claim the email with `SET NX`, then write the user.
///
/// KEYS[1] user key. ARGV[1] user JSON, ARGV[2] email key or "", ARGV[3] user id.
/// Returns 1, or 0 when the email belongs to another user.
pub(crate) static CREATE_USER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if ARGV[2] ~= '' then
  if not redis.call('SET', ARGV[2], ARGV[3], 'NX') then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"#,
    )
});

/// `updateUser`: compare-and-set the user record and move the email index with it.
///
/// KEYS[1] user key. ARGV[1] the JSON read, ARGV[2] the new JSON, ARGV[3] user id,
/// ARGV[4] old email key or "", ARGV[5] new email key or "".
/// Returns 1; 0 when the record changed since it was read (retry); -1 when the new email
/// belongs to another user.
pub(crate) static UPDATE_USER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[5] ~= '' and ARGV[5] ~= ARGV[4] then
  if not redis.call('SET', ARGV[5], ARGV[3], 'NX') then
    if redis.call('GET', ARGV[5]) ~= ARGV[3] then return -1 end
  end
end
if ARGV[4] ~= '' and ARGV[4] ~= ARGV[5] and redis.call('GET', ARGV[4]) == ARGV[3] then
  redis.call('DEL', ARGV[4])
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"#,
    )
});

/// Compare-and-set of one record, for read-modify-write updates.
///
/// KEYS[1] key. ARGV[1] the value read, or "" when there was none (records are never
/// empty), ARGV[2] the new value, ARGV[3] absolute expiry in Unix milliseconds, or "" to
/// keep the key's current TTL.
/// Returns 1, or 0 when the value changed (or vanished, or appeared) since it was read.
pub(crate) static COMPARE_AND_SET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
if ARGV[3] == '' then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
else
  redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
end
return 1
"#,
    )
});

/// Write (or delete) a record that belongs to a user, only while the user exists, so that
/// no record outlives `deleteUser` (which runs as one script too).
///
/// KEYS[1] user key, KEYS[2] record key. ARGV[1] the value, ARGV[2] "DEL" to delete the
/// record instead. Returns 1, or 0 when the user does not exist.
pub(crate) static SET_FOR_USER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] == 'DEL' then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], ARGV[1])
end
return 1
"#,
    )
});

/// Replace a value only if it is still the one given (a missing key is never equal).
///
/// KEYS[1] key. ARGV[1] the current value, ARGV[2] the new one. Returns 1, or 0 when the
/// key holds something else or nothing.
pub(crate) static REPLACE_IF_EQUAL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"#,
    )
});

/// Append a record to a list that lives as long as its longest-lived record (Redis 6.2 has
/// neither `PEXPIREAT … GT` nor `PEXPIRETIME`).
///
/// KEYS[1] list key. ARGV[1] the record, ARGV[2] its absolute expiry in Unix milliseconds.
/// Returns 1.
pub(crate) static PUSH_EXPIRING: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
redis.call('RPUSH', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
local now = redis.call('TIME')
local at = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + ttl
if ttl < 0 or at < tonumber(ARGV[2]) then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
return 1
"#,
    )
});

/// Write a record and add its key to the owner's index set (accounts, sessions,
/// authenticators). Index members whose record is gone (expired sessions) are dropped on
/// the way, so the sets do not grow without bound.
///
/// KEYS[1] record key. ARGV[1] JSON, ARGV[2] index key or "", ARGV[3] "NX" (fail when the
/// record exists) or "", ARGV[4] absolute expiry in Unix milliseconds or "".
/// Returns 1, or 0 when ARGV[3] is "NX" and the record exists.
pub(crate) static CREATE_INDEXED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local set = {'SET', KEYS[1], ARGV[1]}
if ARGV[3] == 'NX' then table.insert(set, 'NX') end
if ARGV[4] ~= '' then
  table.insert(set, 'PXAT')
  table.insert(set, ARGV[4])
end
if not redis.call(unpack(set)) then return 0 end
if ARGV[2] ~= '' then
  for _, member in ipairs(redis.call('SMEMBERS', ARGV[2])) do
    if redis.call('EXISTS', member) == 0 then redis.call('SREM', ARGV[2], member) end
  end
  redis.call('SADD', ARGV[2], KEYS[1])
end
return 1
"#,
    )
});

/// Delete a record and remove its key from its owner's index set.
///
/// KEYS[1] record key. ARGV[1] index key prefix (`…:by-user-id:`); the owner is the
/// record's `userId`. Returns the deleted JSON, or nil.
pub(crate) static DELETE_INDEXED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
redis.call('DEL', KEYS[1])
local ok, rec = pcall(cjson.decode, raw)
if ok and type(rec) == 'table' and type(rec.userId) == 'string' then
  redis.call('SREM', ARGV[1] .. rec.userId, KEYS[1])
end
return raw
"#,
    )
});

/// `deleteUser`: the user, its email index (if it still points at this user) and every
/// account, session and authenticator in the user's index sets, with the sets.
///
/// KEYS[1] user key. ARGV[1] user id, ARGV[2] email key prefix, ARGV[3..5] the account,
/// session and authenticator index keys, ARGV[6] the token index prefix (the unused magic
/// links of the user's address go too). A record listed in an index but owned by another
/// user (`userId` differs) is left alone. Returns 1.
pub(crate) static DELETE_USER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local function decode(raw)
  local ok, rec = pcall(cjson.decode, raw)
  if ok and type(rec) == 'table' then return rec end
  return nil
end
local user = redis.call('GET', KEYS[1])
if user then
  local rec = decode(user)
  if rec and type(rec.email) == 'string' then
    local email_key = ARGV[2] .. rec.email
    if redis.call('GET', email_key) == ARGV[1] then redis.call('DEL', email_key) end
    local tokens = ARGV[6] .. rec.email
    for _, member in ipairs(redis.call('SMEMBERS', tokens)) do redis.call('DEL', member) end
    redis.call('DEL', tokens)
  end
  redis.call('DEL', KEYS[1])
end
for i = 3, 5 do
  for _, member in ipairs(redis.call('SMEMBERS', ARGV[i])) do
    local raw = redis.call('GET', member)
    if raw then
      local rec = decode(raw)
      if not (rec and type(rec.userId) == 'string' and rec.userId ~= ARGV[1]) then
        redis.call('DEL', member)
      end
    end
  end
  redis.call('DEL', ARGV[i])
end
return 1
"#,
    )
});

/// Rate limiting: count one event unless locked; lock when over the limit.
///
/// KEYS[1] count key, KEYS[2] lock key. ARGV[1] limit, ARGV[2] window (ms), ARGV[3]
/// lock-out (ms). Returns the lock's time left in ms, or 0 when the event is allowed.
pub(crate) static RATE_COUNT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local left = redis.call('PTTL', KEYS[2])
if left > 0 then return left end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  redis.call('DEL', KEYS[1])
  return tonumber(ARGV[3])
end
return 0
"#,
    )
});

/// Rate limiting: take back one counted event (never below zero; the window's expiry and
/// any lock stay). KEYS[1] count key.
pub(crate) static RATE_GIVE_BACK: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n and n > 0 then redis.call('DECR', KEYS[1]) end
return 0
"#,
    )
});
