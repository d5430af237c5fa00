PRAGMA user_version = 11;
CREATE TABLE bindings (
	platform   TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	agent      TEXT NOT NULL,
	session_id TEXT NOT NULL,
	cwd        TEXT NOT NULL DEFAULT '',
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL, title TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (platform, channel, thread)
) WITHOUT ROWID;
CREATE TABLE budget_holds (
	platform   TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	budget     TEXT NOT NULL,
	reached_ms INTEGER NOT NULL,
	PRIMARY KEY (platform, channel, thread)
) WITHOUT ROWID;
CREATE TABLE choices (
	platform TEXT NOT NULL,
	channel  TEXT NOT NULL,
	thread   TEXT NOT NULL,
	option   TEXT NOT NULL,
	value    TEXT NOT NULL,
	PRIMARY KEY (platform, channel, thread, option)
) WITHOUT ROWID;
CREATE TABLE entries (
	session_id TEXT NOT NULL,
	seq        INTEGER NOT NULL,
	type       TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL,
	data       TEXT NOT NULL, -- JSON, by type; see codec.go
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE open_messages (
	platform TEXT NOT NULL,
	channel  TEXT NOT NULL,
	thread   TEXT NOT NULL,
	data     TEXT NOT NULL, -- JSON: [{"key","id","card","lines":[{"key","text"}]}]
	PRIMARY KEY (platform, channel, thread)
) WITHOUT ROWID;
CREATE TABLE prompts (
	id           TEXT PRIMARY KEY NOT NULL,
	platform     TEXT NOT NULL,
	channel      TEXT NOT NULL,
	thread       TEXT NOT NULL,
	session_id   TEXT NOT NULL,
	request_id   TEXT NOT NULL,
	tool_call_id TEXT NOT NULL,
	title        TEXT NOT NULL,
	kind         TEXT NOT NULL,
	options      TEXT NOT NULL, -- JSON: [{"id","name","kind"}]
	message_id   TEXT NOT NULL DEFAULT '',
	status       TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'expired', 'cancelled')),
	chosen       TEXT NOT NULL DEFAULT '',
	chosen_by    TEXT NOT NULL DEFAULT '',
	created_ms   INTEGER NOT NULL,
	expires_ms   INTEGER NOT NULL DEFAULT 0,
	resolved_ms  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE "running_turns" (
	platform   TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	session_id TEXT NOT NULL,
	started_ms INTEGER NOT NULL,
	prompt     TEXT NOT NULL DEFAULT '',
	attempts   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (platform, channel, thread, started_ms)
) WITHOUT ROWID;
CREATE TABLE seen (
	platform   TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	message_id TEXT NOT NULL,
	seen_ms    INTEGER NOT NULL,
	PRIMARY KEY (platform, channel, thread)
) WITHOUT ROWID;
CREATE TABLE sessions_gone (
	session_id TEXT PRIMARY KEY NOT NULL,
	deleted_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE turns (
	session_id   TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	platform     TEXT NOT NULL,
	channel      TEXT NOT NULL,
	thread       TEXT NOT NULL,
	stop_reason  TEXT NOT NULL,
	error        TEXT NOT NULL,
	started_ms   INTEGER NOT NULL,
	ended_ms     INTEGER NOT NULL,
	used         INTEGER, -- NULL when the agent did not say
	size         INTEGER, -- NULL when the agent did not say
	cost         REAL,    -- NULL when the agent did not say
	currency     TEXT NOT NULL,
	prompt_chars INTEGER NOT NULL,
	reply_chars  INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE INDEX bindings_session ON bindings (session_id);
CREATE INDEX prompts_pending ON prompts (created_ms) WHERE status = 'pending';
CREATE INDEX turns_channel ON turns (platform, channel, ended_ms);
INSERT INTO "bindings" VALUES ('discord', 'c/1', 't1', 'claude', 'sess-1', '/work/a', 1700000000123, 1700000000128, 'Fix the build');
INSERT INTO "bindings" VALUES ('slack', 'C2', '1700000000.000100', 'codex', 'sess-2', '', 1700000000124, 1700000000124, '');
INSERT INTO "budget_holds" VALUES ('discord', 'c/1', 't1', 'channel', 1700000000153);
INSERT INTO "choices" VALUES ('discord', 'c/1', 't1', 'mode', 'code');
INSERT INTO "choices" VALUES ('discord', 'c/1', 't1', 'model', 'opus');
INSERT INTO "entries" VALUES ('sess-1', 0, 'message', 1700000000143, 1700000000143, '{"role":"user","text":"Fix <it> & push"}');
INSERT INTO "entries" VALUES ('sess-1', 1, 'thought', 1700000000144, 1700000000145, '{"text":"Hmm","length":9}');
INSERT INTO "entries" VALUES ('sess-1', 2, 'tool_call', 1700000000145, 1700000000146, '{"id":"c1","title":"Edit","kind":"edit","status":"completed","input":{"path":"a.go"},"output":{"ok":true},"content":[{"type":"diff","path":"a.go","oldText":"a","newText":"b"},{"type":"terminal","terminalId":"t1"}],"locations":[{"path":"a.go","line":3}]}');
INSERT INTO "entries" VALUES ('sess-1', 3, 'permission_request', 1700000000146, 1700000000147, '{"requestId":"7","toolCallId":"c1","title":"Edit","options":[{"id":"allow","name":"Allow","kind":"allow_once"},{"id":"deny","name":"Deny","kind":"reject_once"}],"chosen":"allow","askedMs":1700000000146,"answeredMs":1700000000147}');
INSERT INTO "entries" VALUES ('sess-1', 4, 'plan', 1700000000147, 1700000000147, '{"entries":[{"content":"a","priority":"high","status":"pending"}]}');
INSERT INTO "entries" VALUES ('sess-1', 5, 'meta', 1700000000148, 1700000000148, '{"modes":[{"id":"ask","name":"Ask","description":"asks"}],"currentMode":"ask","models":[{"id":"opus","name":"Opus"}],"currentModel":"opus","commands":[{"name":"init","description":"set up"}],"config":[{"id":"effort","name":"Effort","value":"high"}]}');
INSERT INTO "entries" VALUES ('sess-1', 6, 'mode_change', 1700000000149, 1700000000149, '{"previous":"ask","new":"code"}');
INSERT INTO "entries" VALUES ('sess-1', 7, 'question', 1700000000150, 1700000000151, '{"requestId":"9","message":"Which color?","mode":"form","fields":["color"],"action":"accept","content":{"color":"green"},"askedMs":1700000000150,"answeredMs":1700000000151}');
INSERT INTO "entries" VALUES ('sess-1', 8, 'message', 1700000000152, 1700000000152, '{"role":"assistant","text":"Done.","length":12}');
INSERT INTO "open_messages" VALUES ('discord', 'c/1', 't1', '{"v":1,"messages":[{"key":"k1","id":"m11","lines":[{"key":"c1","text":"⏳ ls"}]},{"key":"k2","id":"m12","card":true,"lines":[{"key":"c2","text":"a"},{"key":"c3","text":"b"}]}]}');
INSERT INTO "prompts" VALUES ('p1', 'discord', 'c/1', 't1', 'sess-1', '7', 'c1', 'Edit main.go', 'edit', '[{"id":"allow","name":"Allow","kind":"allow_once"},{"id":"deny","name":"Deny","kind":"reject_once"}]', 'm1', 'pending', '', '', 1700000000133, 1700000060123, 0);
INSERT INTO "prompts" VALUES ('p2', 'slack', 'C2', '1700000000.000100', 'sess-2', '8', '', 'Run ls', 'execute', '[{"id":"allow","name":"Allow","kind":"allow_once"},{"id":"deny","name":"Deny","kind":"reject_once"}]', '', 'answered', 'allow', 'u1', 1700000000134, 0, 1700000000135);
INSERT INTO "running_turns" VALUES ('discord', 'c/1', 't1', 'sess-1', 1700000000143, '{"v":1,"id":"m9","author":{"id":"u1","name":"Ann","roles":["dev","ops"]},"text":"Fix <it> & push","files":[{"name":"a.txt","contentType":"text/plain","size":3,"url":"https://x/a.txt","text":"abc"},{"name":"p.png","contentType":"image/png","size":2,"data":"iVA="},{"name":"big.bin","skipped":"too big"}],"space":"g1","timeMs":1700000000143}', 1);
INSERT INTO "running_turns" VALUES ('slack', 'C2', '1700000000.000100', 'sess-2', 1700000000144, '', 0);
INSERT INTO "seen" VALUES ('discord', 'c/1', 't1', 'm9', 1700000000143);
INSERT INTO "sessions_gone" VALUES ('sess-gone', 1796310597094);
INSERT INTO "turns" VALUES ('sess-1', 1, 'discord', 'c/1', 't1', 'end_turn', '', 1700000000143, 1700000000153, 1200, 200000, 0.25, 'USD', 15, 40);
INSERT INTO "turns" VALUES ('sess-1', 2, 'discord', 'c/1', 't1', '', 'agent exited', 1700000000163, 1700000000173, NULL, NULL, NULL, '', 3, 0);
