-- What Alertmanager has been told, one row per alert (per label set). An open alert is re-sent
-- every health run; a resolved one (ends_at set) is sent until Alertmanager accepts it, then
-- dropped. delivered_at stays NULL until Alertmanager accepted the row's current state.
CREATE TABLE alertmanager_alerts (
  fingerprint TEXT PRIMARY KEY,
  check_key TEXT NOT NULL,
  labels_json TEXT NOT NULL,
  annotations_json TEXT NOT NULL,
  starts_at REAL NOT NULL,
  ends_at REAL,
  delivered_at REAL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT
);
