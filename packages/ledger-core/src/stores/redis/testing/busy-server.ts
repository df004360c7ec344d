/**
 * Holds a Redis server busy from another connection for ARGV[1] ms: DEBUG SLEEP is disabled on
 * this machine's Redis (enable-debug-command no), so a script spins on TIME instead. Commands
 * sent meanwhile queue on their sockets, and the next event-loop turn runs them.
 */
export const BUSY_SCRIPT = `
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
for _ = 1, 100000000 do
  local now = redis.call('TIME')
  if (now[1] * 1000000 + now[2]) - start > tonumber(ARGV[1]) * 1000 then break end
end
return 1`;
