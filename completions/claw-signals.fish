# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_claw_signals_global_optspecs
    string join \n state-dir= agent= all-agents store= config= now= json ndjson layout= offline via-gateway table color= db= schema= h/help V/version
end

function __fish_claw_signals_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_claw_signals_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_claw_signals_using_subcommand
    set -l cmd (__fish_claw_signals_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c claw-signals -n "__fish_claw_signals_needs_command" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l json -d 'Print one JSON document'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l ndjson -d 'Print one JSON object per line'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -s V -l version -d 'Print version'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -f -a "record" -d 'Record an event as the gateway does (dedupe, head, watchers, notices, hourly prune) and print it'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -f -a "list" -d 'List events, oldest first (NDJSON unless on a terminal)'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -f -a "changes-since" -d 'What session_status returns for changesSince VERSION: the state version and at most 200 events after VERSION (no cursor moves)'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -f -a "version" -d 'The state version of sessions (0 when nothing was logged)'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -f -a "prune" -d 'Enforce retention: 30 days and 50 000 rows, watermarks stamped, cursors expired'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -f -a "forget" -d 'Delete a session\'s signal state, as session deletion does: its events, head and upstream link, and every cursor where it is watcher or target'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -f -a "stats" -d 'Rows, sessions, oldest and newest events, cursors, pending notices (those that reach their watchers; the others counted apart by reason), size'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -f -a "bench-changes-since" -d 'Measures changes-since in process (for bench/signals.py)'
complete -c claw-signals -n "__fish_claw_signals_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l session -d 'The session the event is about (key or alias, e.g. agent:main:subagent:c1)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l kind -d 'The kind: human_direct_message, upstream_missing, goal_changed, child_spawned, run_completed, run_failed, compacted, adopted, created, or any other word' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l actor -d 'Who caused it: human, agent or system (default: the kind\'s producer\'s)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l actor-id -d 'The actor\'s id; a watcher whose key equals it is not notified (self-suppression)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l session-id -d 'The session id' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l run-id -d 'The run id (child_spawned / run_* dedupe keys are built from it)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l summary -d 'The one-line summary (default: the kind\'s, e.g. "human message via telegram")' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l payload -d 'The payload, a JSON object (key order kept)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l dedupe-key -d 'The dedupe key: a second event with it returns the first (and burns a sequence)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l occurred-at -d 'When it happened, epoch ms or ISO-8601 (clamped to the last 24 h; default: now)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l watcher -d 'A lineage watcher to notify (repeatable; child_spawned seeds its cursor)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l via -d 'The channel (human_direct_message) or catalog id (upstream_missing, adopted) named in the default summary and payload' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l outcome -d 'The outcome of a run_failed event: error, timeout or cancelled (default error)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l operation-id -d 'The compaction operation id (the compacted dedupe key)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l if-watched -d 'Record human_direct_message only when a watcher would see it (a --watcher is given or a cursor targets the session), as the gateway\'s producer does'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l stdin -d 'Read events from stdin, one JSON object per line (fields sessionKey, kind, actorType, actorId, agentId, sessionId, runId, summary, payload, dedupeKey, occurredAt, watcherSessionKeys, via, outcome, operationId); one transaction per line'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l json -d 'Print one JSON document'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l ndjson -d 'Print one JSON object per line'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand record" -s h -l help -d 'Print help'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l session -d 'Only this session' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l kind -d 'Only this kind' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l since -d 'Only events after this sequence' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l limit -d 'At most N events' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l json -d 'Print one JSON document'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l ndjson -d 'Print one JSON object per line'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand list" -s h -l help -d 'Print help'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l limit -d 'At most N events (1 to 200; default 200)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l json -d 'Print one JSON document'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l ndjson -d 'Print one JSON object per line'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand changes-since" -s h -l help -d 'Print help'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l all -d 'Every head in the database'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l json -d 'Print one JSON document'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l ndjson -d 'Print one JSON object per line'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand version" -s h -l help -d 'Print help'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l retention -d 'Age limit for events and cursors (e.g. 30d, 12h)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l max-rows -d 'Row cap' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l dry-run -d 'Count what would be removed; change nothing'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l json -d 'Print one JSON document'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l ndjson -d 'Print one JSON object per line'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand prune" -s h -l help -d 'Print help'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l dry-run -d 'Count what would be deleted; change nothing'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l json -d 'Print one JSON document'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l ndjson -d 'Print one JSON object per line'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand forget" -s h -l help -d 'Print help'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l json -d 'Print one JSON document'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l ndjson -d 'Print one JSON object per line'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand stats" -s h -l help -d 'Print help'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l after -d 'The version' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l iterations -d 'Repetitions' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l json -d 'Print one JSON document'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l ndjson -d 'Print one JSON object per line'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand bench-changes-since" -s h -l help -d 'Print help'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand help; and not __fish_seen_subcommand_from record list changes-since version prune forget stats bench-changes-since help" -f -a "record" -d 'Record an event as the gateway does (dedupe, head, watchers, notices, hourly prune) and print it'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand help; and not __fish_seen_subcommand_from record list changes-since version prune forget stats bench-changes-since help" -f -a "list" -d 'List events, oldest first (NDJSON unless on a terminal)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand help; and not __fish_seen_subcommand_from record list changes-since version prune forget stats bench-changes-since help" -f -a "changes-since" -d 'What session_status returns for changesSince VERSION: the state version and at most 200 events after VERSION (no cursor moves)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand help; and not __fish_seen_subcommand_from record list changes-since version prune forget stats bench-changes-since help" -f -a "version" -d 'The state version of sessions (0 when nothing was logged)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand help; and not __fish_seen_subcommand_from record list changes-since version prune forget stats bench-changes-since help" -f -a "prune" -d 'Enforce retention: 30 days and 50 000 rows, watermarks stamped, cursors expired'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand help; and not __fish_seen_subcommand_from record list changes-since version prune forget stats bench-changes-since help" -f -a "forget" -d 'Delete a session\'s signal state, as session deletion does: its events, head and upstream link, and every cursor where it is watcher or target'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand help; and not __fish_seen_subcommand_from record list changes-since version prune forget stats bench-changes-since help" -f -a "stats" -d 'Rows, sessions, oldest and newest events, cursors, pending notices (those that reach their watchers; the others counted apart by reason), size'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand help; and not __fish_seen_subcommand_from record list changes-since version prune forget stats bench-changes-since help" -f -a "bench-changes-since" -d 'Measures changes-since in process (for bench/signals.py)'
complete -c claw-signals -n "__fish_claw_signals_using_subcommand help; and not __fish_seen_subcommand_from record list changes-since version prune forget stats bench-changes-since help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
