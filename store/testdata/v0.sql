-- An audit store as queuewatch wrote it before schema versions existed:
-- the schema exactly as that release created it, and rows that release's
-- store wrote (a job left running, a finished delete, outcomes, and an
-- archived message with binary headers that was restored).
CREATE TABLE IF NOT EXISTS jobs (
	id TEXT PRIMARY KEY, dlq TEXT NOT NULL, action TEXT NOT NULL, who TEXT NOT NULL,
	dry_run INTEGER NOT NULL, selection TEXT NOT NULL, target TEXT NOT NULL,
	state TEXT NOT NULL, error TEXT NOT NULL DEFAULT '',
	created INTEGER NOT NULL, finished INTEGER NOT NULL DEFAULT 0,
	depth INTEGER NOT NULL DEFAULT 0, to_move INTEGER NOT NULL DEFAULT 0, moved INTEGER NOT NULL DEFAULT 0,
	failed INTEGER NOT NULL DEFAULT 0, skipped INTEGER NOT NULL DEFAULT 0,
	remaining INTEGER NOT NULL DEFAULT 0, duplicates INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS jobs_dlq ON jobs(dlq, created);
CREATE TABLE IF NOT EXISTS outcomes (
	job_id TEXT NOT NULL, seq INTEGER NOT NULL, dlq TEXT NOT NULL, message_id TEXT NOT NULL,
	result TEXT NOT NULL, target TEXT NOT NULL, reason TEXT NOT NULL, source TEXT NOT NULL, possible_duplicate INTEGER NOT NULL,
	PRIMARY KEY (job_id, seq));
CREATE INDEX IF NOT EXISTS outcomes_msg ON outcomes(dlq, message_id, result);
CREATE TABLE IF NOT EXISTS archive (
	id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, dlq TEXT NOT NULL,
	message_id TEXT NOT NULL, archived_at INTEGER NOT NULL, properties TEXT NOT NULL,
	headers TEXT NOT NULL, key BLOB, body BLOB NOT NULL,
	restored_at INTEGER NOT NULL DEFAULT 0, restored_to TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS archive_dlq ON archive(dlq, id);
INSERT INTO jobs VALUES ('job-run', 'rabbitmq:main:/:orders.dlq', 'replay', 'ann', 0, '{"all":true,"limit":10}', '{"kind":"original"}', 'running', '', 1764000000000, 0, 20, 10, 2, 1, 0, 7, 1);
INSERT INTO jobs VALUES ('job-del', 'kafka:prod::orders.DLT', 'delete', 'bob', 0, '{"ids":["m1"]}', '{}', 'succeeded', '', 1764000060000, 1764000120000, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO outcomes VALUES ('job-run', 0, 'rabbitmq:main:/:orders.dlq', 'a', 'moved', '/orders', '', 'orders', 1);
INSERT INTO outcomes VALUES ('job-run', 1, 'rabbitmq:main:/:orders.dlq', 'b', 'moved', '/orders', '', 'orders', 0);
INSERT INTO outcomes VALUES ('job-run', 2, 'rabbitmq:main:/:orders.dlq', 'c', 'failed', '', 'not confirmed', 'orders', 0);
INSERT INTO outcomes VALUES ('job-del', 0, 'kafka:prod::orders.DLT', 'm1', 'deleted', '', '', 'orders', 0);
INSERT INTO archive VALUES (1, 'job-del', 'kafka:prod::orders.DLT', 'm1', 1796298843779, '{"offset":"41","partition":"0"}', '[{"k":"a/8=","v":"/wD+","t":"bytes"},{"k":"cmV0cmllcw==","v":"Mw=="}]', X'6B31', X'FF00FE', 1796298843779, 'kafka:prod::orders');
