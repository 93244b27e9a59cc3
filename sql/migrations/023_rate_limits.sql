-- The per-client limits every dyno shares (the hosted form page's FORM_PAGE_RATE_PER_MINUTE, the
-- inbound listener's INBOUND_RATE_PER_MINUTE): rate-limiter-flexible's Postgres store
-- (RateLimiterPostgres, sql/rate-limits.ts). The columns are exactly those the library creates
-- itself when it is not told `tableCreated: true` (its _getCreateTableStmt): it upserts
-- (key, points, expire) and reads them back by name. Created here so the release step owns the
-- schema and no dyno needs CREATE on public.
--
-- key: `<limit>:<points>:<client>` (the library's keyPrefix and key); points: consumed in the
-- current window; expire: the window's end in epoch milliseconds (the dyno's clock).
-- Service role only (never granted to cartero_tenant): no tenant data, client addresses only.
CREATE TABLE rate_limits (
  key    varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);

-- The library's own cleanup (clearExpiredByTimeout: every 5 minutes, rows expired over an hour
-- ago) deletes by expire; without this it would scan the table.
CREATE INDEX rate_limits_expire ON rate_limits (expire);
