-- Health alerts: what is known of each check that is not ok, and the outbox of messages to send.
-- A run updates alert_state and enqueues its message in one transaction, so news is never lost
-- between deciding and sending; a message leaves the outbox only once Slack accepted it.
CREATE TABLE alert_state (
  check_key TEXT PRIMARY KEY,
  status TEXT NOT NULL CHECK (status IN ('warning', 'critical')),
  message TEXT NOT NULL,
  since REAL NOT NULL,
  notified_at REAL,
  notified_status TEXT CHECK (notified_status IN ('warning', 'critical')),
  updated_at REAL NOT NULL
);

CREATE TABLE alert_outbox (
  id INTEGER PRIMARY KEY,
  idempotency_key TEXT NOT NULL UNIQUE,
  created_at REAL NOT NULL,
  run_id INTEGER,
  summary TEXT NOT NULL,
  text TEXT NOT NULL,
  blocks_json TEXT,
  notices_json TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_attempt_at REAL,
  last_error TEXT,
  sent_at REAL,
  remote_id TEXT
);
CREATE INDEX alert_outbox_status ON alert_outbox (status, id);
