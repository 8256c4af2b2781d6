//! Lua scripts for the operations that touch several keys. Redis runs a script atomically,
//! so an index never points at a half-written record and two callers never both win a
//! uniqueness check. Scripts name some keys through `ARGV` (index keys, set members), so
//! this adapter targets a single Redis server (or a primary with replicas), not Redis
//! Cluster.

use std::sync::LazyLock;

use redis::Script;

/// `createUser`: claim the email with `SET NX`, then write the user.
///
/// KEYS[1] user key. ARGV[1] user JSON, ARGV[2] email key or "", ARGV[3] user id, ARGV[4]
/// the user index. Returns 1, or 0 when the email belongs to another user.
pub(crate) static CREATE_USER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if ARGV[2] ~= '' then
  if not redis.call('SET', ARGV[2], ARGV[3], 'NX') then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', ARGV[4], 0, ARGV[3])
return 1
"#,
    )
});

/// `updateUser`, `updateOrganization`: compare-and-set a record and move its unique index
/// (the user's email, the organization's slug) with it.
///
/// KEYS[1] record key. ARGV[1] the JSON read, ARGV[2] the new JSON, ARGV[3] the record's
/// id, ARGV[4] old index key or "", ARGV[5] new index key or "".
/// Returns 1; 0 when the record changed since it was read (retry); -1 when the new index
/// key belongs to another record.
pub(crate) static UPDATE_UNIQUE: LazyLock<Script> = LazyLock::new(|| {
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

/// `appendAuditRecord`: a record added to the audit log unless its `seq` is taken.
///
/// KEYS[1] the audit log. ARGV[1] the record's `seq`, ARGV[2] its JSON. Returns 1, or 0
/// when a record with this `seq` is there.
pub(crate) static APPEND_AUDIT_RECORD: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[1]) > 0 then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
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
/// record's `userId`. ARGV[2], optional: the prefix of a hash of the owner's whose field
/// KEYS[1] goes too (a session's active organization). Returns the deleted JSON, or nil.
pub(crate) static DELETE_INDEXED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
redis.call('DEL', KEYS[1])
local ok, rec = pcall(cjson.decode, raw)
if ok and type(rec) == 'table' and type(rec.userId) == 'string' then
  redis.call('SREM', ARGV[1] .. rec.userId, KEYS[1])
  if ARGV[2] then redis.call('HDEL', ARGV[2] .. rec.userId, KEYS[1]) end
end
return raw
"#,
    )
});

/// Lua: `decode(raw)`, the JSON object stored, or nil when it is none; `load(key)`, the
/// JSON object at `key`, or nil when there is none.
macro_rules! lua_decode {
    () => {
        r#"
local function decode(raw)
  local ok, rec = pcall(cjson.decode, raw)
  if ok and type(rec) == 'table' then return rec end
  return nil
end
local function load(key)
  local raw = redis.call('GET', key)
  if raw then return decode(raw) end
  return nil
end
"#
    };
}

/// Lua: `add_member(members, owners, user_orgs, org_id, user_id, json, owner)`, which
/// adds the member unless the user is one already (then answers false): the member in
/// the organization's hash, in its owners when `owner` is '1', and the organization in the
/// user's index.
macro_rules! lua_add_member {
    () => {
        r#"
local function add_member(members, owners, user_orgs, org_id, user_id, json, owner)
  if redis.call('HSETNX', members, user_id, json) == 0 then return false end
  if owner == '1' then redis.call('SADD', owners, user_id) end
  redis.call('SADD', user_orgs, org_id)
  return true
end
"#
    };
}

/// Lua: `forget_active(active, org_id)`, which clears `org_id` as the active
/// organization of the sessions in the user's hash `active`.
macro_rules! lua_forget_active {
    () => {
        r#"
local function forget_active(active, org_id)
  local chosen = redis.call('HGETALL', active)
  for i = 1, #chosen, 2 do
    if chosen[i + 1] == org_id then redis.call('HDEL', active, chosen[i]) end
  end
end
"#
    };
}

/// `deleteUser`: the user, its email index (if it still points at this user), every
/// account, session and authenticator in the user's index sets, its memberships and its
/// API keys, with the index sets.
///
/// KEYS[1] user key. ARGV[1] user id, ARGV[2] email key prefix, ARGV[3..5] the account,
/// session and authenticator index keys, ARGV[6] the token index prefix (the unused magic
/// links of the user's address go too), ARGV[7] the user's organization index, ARGV[8]
/// and ARGV[9] the members hash and owners set prefixes, ARGV[10] the user's API-key
/// index, ARGV[11] the organizations' API-key index prefix, ARGV[12] the user index. A
/// record listed in an index but owned by another user (`userId` differs) is left alone.
/// Returns 1.
pub(crate) static DELETE_USER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_decode!(),
        r#"
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
for _, org_id in ipairs(redis.call('SMEMBERS', ARGV[7])) do
  redis.call('HDEL', ARGV[8] .. org_id, ARGV[1])
  redis.call('SREM', ARGV[9] .. org_id, ARGV[1])
end
redis.call('DEL', ARGV[7])
for _, member in ipairs(redis.call('SMEMBERS', ARGV[10])) do
  local raw = redis.call('GET', member)
  if raw then
    local rec = decode(raw)
    if not (rec and type(rec.userId) == 'string' and rec.userId ~= ARGV[1]) then
      if rec and type(rec.organizationId) == 'string' then
        redis.call('SREM', ARGV[11] .. rec.organizationId, member)
      end
      redis.call('DEL', member)
    end
  end
end
redis.call('DEL', ARGV[10])
redis.call('ZREM', ARGV[12], ARGV[1])
return 1
"#,
    ))
});

/// `createOrganization`: the organization, its slug (claimed with `SET NX`) and its first
/// member, if the member's user exists.
///
/// KEYS[1] organization key, KEYS[2] slug key, KEYS[3] the owner's user key, KEYS[4]
/// members hash, KEYS[5] owners set, KEYS[6] the user's organization index. ARGV[1]
/// organization JSON, ARGV[2] organization id, ARGV[3] user id, ARGV[4] member JSON,
/// ARGV[5] '1' when the member has the owner role.
/// Returns 1; 0 when the slug or the id is in use; -1 when the user does not exist.
pub(crate) static CREATE_ORGANIZATION: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_add_member!(),
        r#"
if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if not redis.call('SET', KEYS[2], ARGV[2], 'NX') then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
add_member(KEYS[4], KEYS[5], KEYS[6], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
return 1
"#,
    ))
});

/// `deleteOrganization`: the organization, its slug (if it still points at it), its
/// members (out of their users' indexes, and out of their sessions' choice of active
/// organization), owners, teams, invitations (with their token and address indexes) and
/// API keys (out of their users' indexes). A record listed in an index but of another
/// organization is left alone.
///
/// KEYS[1] organization key, KEYS[2] members hash, KEYS[3] owners set, KEYS[4] teams
/// hash, KEYS[5] team-name hash, KEYS[6] invitation index, KEYS[7] API-key index. ARGV[1]
/// organization id, ARGV[2] slug key prefix, ARGV[3] the users' organization index
/// prefix, ARGV[4] the users' active-organization hash prefix, ARGV[5] invitation token
/// prefix, ARGV[6] invitation address index prefix, ARGV[7] the users' API-key index
/// prefix. Returns 1, or 0 when there is no such organization.
pub(crate) static DELETE_ORGANIZATION: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_decode!(),
        lua_forget_active!(),
        r#"
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local org = decode(raw)
if org and type(org.slug) == 'string' then
  local slug = ARGV[2] .. org.slug
  if redis.call('GET', slug) == ARGV[1] then redis.call('DEL', slug) end
end
for _, user_id in ipairs(redis.call('HKEYS', KEYS[2])) do
  redis.call('SREM', ARGV[3] .. user_id, ARGV[1])
  forget_active(ARGV[4] .. user_id, ARGV[1])
end
for _, member in ipairs(redis.call('SMEMBERS', KEYS[6])) do
  local rec = load(member)
  if rec and rec.organizationId == ARGV[1] then
    if type(rec.tokenHash) == 'string' then
      local token = ARGV[5] .. rec.tokenHash
      if redis.call('GET', token) == rec.id then redis.call('DEL', token) end
    end
    if type(rec.email) == 'string' then redis.call('SREM', ARGV[6] .. rec.email, member) end
    redis.call('DEL', member)
  end
end
for _, member in ipairs(redis.call('SMEMBERS', KEYS[7])) do
  local rec = load(member)
  if rec and rec.organizationId == ARGV[1] then
    if type(rec.userId) == 'string' then redis.call('SREM', ARGV[7] .. rec.userId, member) end
    redis.call('DEL', member)
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
return 1
"#,
    ))
});

/// `addMember`: the member, if the user and the organization exist and the user is not a
/// member yet.
///
/// KEYS[1] user key, KEYS[2] organization key, KEYS[3] members hash, KEYS[4] owners set,
/// KEYS[5] the user's organization index. ARGV[1] organization id, ARGV[2] user id,
/// ARGV[3] member JSON, ARGV[4] '1' when the member has the owner role.
/// Returns 1; 0 when the user is a member already; -1 when the user does not exist; -2
/// when the organization does not.
pub(crate) static ADD_MEMBER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_add_member!(),
        r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('EXISTS', KEYS[2]) == 0 then return -2 end
if add_member(KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4]) then return 1 end
return 0
"#,
    ))
});

/// `setMemberRoles`, `setMemberTeams`: compare-and-set of one member that never leaves the
/// organization without an owner (the owners set is read in the same script, so of
/// concurrent changes none does).
///
/// KEYS[1] members hash, KEYS[2] owners set. ARGV[1] user id, ARGV[2] the JSON read,
/// ARGV[3] the new JSON, ARGV[4] '1' when the new roles hold the owner role, '0' when
/// they do not, '' when the roles do not change.
/// Returns 1; 0 when the user is not a member; -1 when the member changed since it was
/// read (retry); -2 when no owner would be left.
pub(crate) static SET_MEMBER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
if current ~= ARGV[2] then return -1 end
if ARGV[4] == '0' then
  local others = redis.call('SCARD', KEYS[2]) - redis.call('SISMEMBER', KEYS[2], ARGV[1])
  if others < 1 then return -2 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if ARGV[4] == '1' then
  redis.call('SADD', KEYS[2], ARGV[1])
elseif ARGV[4] == '0' then
  redis.call('SREM', KEYS[2], ARGV[1])
end
return 1
"#,
    )
});

/// `removeMember`: the member, unless no other member is an owner, and their sessions'
/// choice of the organization.
///
/// KEYS[1] members hash, KEYS[2] owners set, KEYS[3] the user's organization index,
/// KEYS[4] the user's active-organization hash. ARGV[1] user id, ARGV[2] organization id.
/// Returns 1; 0 when the user is not a member; -2 when no owner would be left.
pub(crate) static REMOVE_MEMBER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_forget_active!(),
        r#"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
local others = redis.call('SCARD', KEYS[2]) - redis.call('SISMEMBER', KEYS[2], ARGV[1])
if others < 1 then return -2 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[2])
forget_active(KEYS[4], ARGV[2])
return 1
"#,
    ))
});

/// `createTeam`: the team, its name claimed in the organization.
///
/// KEYS[1] organization key, KEYS[2] teams hash, KEYS[3] team-name hash. ARGV[1] team id,
/// ARGV[2] team name, ARGV[3] team JSON.
/// Returns 1; 0 when the id or the name is in use in the organization; -2 when the
/// organization does not exist.
pub(crate) static CREATE_TEAM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
if redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
"#,
    )
});

/// `deleteTeam`: the team, its name, and the team in its members' teams. The members'
/// new JSON is made by the caller from what it read; the script checks that nothing
/// changed since (no member it left out holds the team, those it lists are as read).
///
/// KEYS[1] teams hash, KEYS[2] team-name hash, KEYS[3] members hash. ARGV[1] team id,
/// ARGV[2] the team's name, then for each member in the team: user id, the JSON read,
/// the new JSON.
/// Returns 1; 0 when the team is not there; -1 when a member changed since it was read
/// (retry).
pub(crate) static DELETE_TEAM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_decode!(),
        r#"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
local listed, count = {}, 0
for i = 3, #ARGV, 3 do
  listed[ARGV[i]] = ARGV[i + 1]
  count = count + 1
end
local members = redis.call('HGETALL', KEYS[3])
for i = 1, #members, 2 do
  local read = listed[members[i]]
  if read then
    if members[i + 1] ~= read then return -1 end
    count = count - 1
  else
    local rec = decode(members[i + 1])
    if rec and type(rec.teams) == 'table' then
      for _, team in ipairs(rec.teams) do
        if team == ARGV[1] then return -1 end
      end
    end
  end
end
if count ~= 0 then return -1 end
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('HGET', KEYS[2], ARGV[2]) == ARGV[1] then redis.call('HDEL', KEYS[2], ARGV[2]) end
for i = 3, #ARGV, 3 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 2]) end
return 1
"#,
    ))
});

/// `createInvitation`: the invitation, its token (claimed with `SET NX`) and its indexes.
///
/// KEYS[1] invitation key, KEYS[2] token key, KEYS[3] the organization's (or the sign-up)
/// invitation index. ARGV[1] invitation JSON, ARGV[2] invitation id, ARGV[3] organization
/// key or '' for a sign-up invitation, ARGV[4] the address's index or '' (not pending).
/// Returns 1; 0 when the id or the token is in use; -2 when the organization does not
/// exist.
pub(crate) static CREATE_INVITATION: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if ARGV[3] ~= '' and redis.call('EXISTS', ARGV[3]) == 0 then return -2 end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if not redis.call('SET', KEYS[2], ARGV[2], 'NX') then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[3], KEYS[1])
if ARGV[4] ~= '' then redis.call('SADD', ARGV[4], KEYS[1]) end
return 1
"#,
    )
});

/// `acceptInvitation`: compare-and-set of the invitation (pending → accepted, checked by
/// the caller on what it read), and for an organization's invitation the new member, in
/// one script: of concurrent acceptances one finds the invitation as read.
///
/// KEYS[1] invitation key, KEYS[2] the user's key. ARGV[1] the JSON read, ARGV[2] the
/// accepted JSON, ARGV[3] the address's invitation index, ARGV[4] user id; for an
/// organization's invitation also ARGV[5] organization id, ARGV[6] organization key,
/// ARGV[7] members hash, ARGV[8] owners set, ARGV[9] the user's organization index,
/// ARGV[10] member JSON, ARGV[11] '1' when the member has the owner role.
/// Returns 1 when accepted (and the user made a member), 2 when accepted by a member
/// (kept as they were), 0 when the invitation changed since it was read (retry), -1 when
/// the user does not exist, -2 when the organization does not.
pub(crate) static ACCEPT_INVITATION: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_add_member!(),
        r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
local outcome = 1
if ARGV[5] then
  if redis.call('EXISTS', ARGV[6]) == 0 then return -2 end
  if not add_member(ARGV[7], ARGV[8], ARGV[9], ARGV[5], ARGV[4], ARGV[10], ARGV[11]) then
    outcome = 2
  end
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SREM', ARGV[3], KEYS[1])
return outcome
"#,
    ))
});

/// `setSessionOrganization`: sets (or clears) the session's entry in its user's
/// active-organization hash, and drops the entries of the user's sessions that are gone.
///
/// KEYS[1] session key. ARGV[1] session token, ARGV[2] the active-organization hash
/// prefix, ARGV[3] organization id, or '' to clear.
/// Returns 1, or 0 when the session does not exist.
pub(crate) static SET_SESSION_ORGANIZATION: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_decode!(),
        r#"
local rec = load(KEYS[1])
if not (rec and rec.sessionToken == ARGV[1] and type(rec.userId) == 'string') then return 0 end
local active = ARGV[2] .. rec.userId
if ARGV[3] == '' then
  redis.call('HDEL', active, KEYS[1])
else
  redis.call('HSET', active, KEYS[1], ARGV[3])
end
for _, session in ipairs(redis.call('HKEYS', active)) do
  if redis.call('EXISTS', session) == 0 then redis.call('HDEL', active, session) end
end
return 1
"#,
    ))
});

/// `getSessionOrganization`: the session's active organization, if the session and the
/// organization exist.
///
/// KEYS[1] session key. ARGV[1] session token, ARGV[2] the active-organization hash
/// prefix, ARGV[3] organization key prefix. Returns the organization id, or nil.
pub(crate) static GET_SESSION_ORGANIZATION: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_decode!(),
        r#"
local rec = load(KEYS[1])
if not (rec and rec.sessionToken == ARGV[1] and type(rec.userId) == 'string') then
  return false
end
local org_id = redis.call('HGET', ARGV[2] .. rec.userId, KEYS[1])
if not org_id or redis.call('EXISTS', ARGV[3] .. org_id) == 0 then return false end
return org_id
"#,
    ))
});

/// `createApiKey`: the key and its indexes, if its user (and organization) exist.
///
/// KEYS[1] API-key key, KEYS[2] user key, KEYS[3] the user's API-key index. ARGV[1] API
/// key JSON, ARGV[2] organization key or '', ARGV[3] the organization's API-key index or
/// ''.
/// Returns 1; 0 when the id is in use; -1 when the user does not exist; -2 when the
/// organization does not.
pub(crate) static CREATE_API_KEY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
if ARGV[2] ~= '' and redis.call('EXISTS', ARGV[2]) == 0 then return -2 end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
redis.call('SADD', KEYS[3], KEYS[1])
if ARGV[3] ~= '' then redis.call('SADD', ARGV[3], KEYS[1]) end
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

/// The OpenID Provider's clients: replace a client while it is as read. KEYS[1] the
/// clients' hash. ARGV[1] the client id, ARGV[2] its new JSON, ARGV[3] its JSON as read.
/// Returns 1, or 0 when there is no such client or it changed since.
pub(crate) static UPDATE_OIDC_CLIENT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"#,
    )
});
