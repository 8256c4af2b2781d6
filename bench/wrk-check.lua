-- wrk script used by bench/load.sh for every scenario: builds the request from the
-- environment and checks every response, because wrk alone only counts non-2xx/3xx and a
-- load number with wrong answers (a 200 `null` session, a 302 to ?error=…) is worthless.
--
--   WRK_METHOD        request method (default GET)
--   WRK_BODY          request body; sent as application/x-www-form-urlencoded
--   WRK_COOKIE        Cookie header value
--   WRK_HOST          Host header value (optional; name-based virtual hosts)
--   WRK_AUTHORIZATION Authorization header value (optional: Basic client credentials,
--                     a Bearer access token)
--   WRK_EXPECT_CLASS  expected status class: 2 (2xx, default) or 3 (3xx)
--   WRK_EXPECT_BODY   substring every response body must contain (optional)
--   WRK_REJECT_LOCATION  substring a Location header must NOT contain (optional)
--
-- done() prints `checked_responses: N` and `bad_responses: N`, parsed by load.sh.

local method = os.getenv("WRK_METHOD")
local body = os.getenv("WRK_BODY")
local cookie = os.getenv("WRK_COOKIE")
local expect_class = tonumber(os.getenv("WRK_EXPECT_CLASS") or "2")
local expect_body = os.getenv("WRK_EXPECT_BODY")
local reject_location = os.getenv("WRK_REJECT_LOCATION")

if method and method ~= "" then wrk.method = method end
if body and body ~= "" then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end
if cookie and cookie ~= "" then wrk.headers["Cookie"] = cookie end
local host = os.getenv("WRK_HOST")
if host and host ~= "" then wrk.headers["Host"] = host end
local authorization = os.getenv("WRK_AUTHORIZATION")
if authorization and authorization ~= "" then wrk.headers["Authorization"] = authorization end
if expect_body == "" then expect_body = nil end
if reject_location == "" then reject_location = nil end

-- Each wrk thread runs its own Lua state; setup() keeps handles to sum them in done().
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  checked = 0
  bad = 0
  first_bad = ""
end

function response(status, headers, resp_body)
  checked = checked + 1
  local ok = math.floor(status / 100) == expect_class
  if ok and expect_body and not string.find(resp_body or "", expect_body, 1, true) then
    ok = false
  end
  if ok and reject_location then
    local location = headers["location"] or headers["Location"] or ""
    if string.find(location, reject_location, 1, true) then ok = false end
  end
  if not ok then
    bad = bad + 1
    if first_bad == "" then
      local location = headers["location"] or headers["Location"] or ""
      local snippet = string.gsub(string.sub(resp_body or "", 1, 120), "%s+", " ")
      first_bad = status .. " " .. location .. " " .. snippet
    end
  end
end

function done(summary, latency, requests)
  local total_checked, total_bad, example = 0, 0, ""
  for _, thread in ipairs(threads) do
    total_checked = total_checked + thread:get("checked")
    total_bad = total_bad + thread:get("bad")
    if example == "" then example = thread:get("first_bad") end
  end
  io.write(string.format("checked_responses: %d\n", total_checked))
  io.write(string.format("bad_responses: %d\n", total_bad))
  if total_bad > 0 then io.write("first_bad_response: " .. example .. "\n") end
end
