# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_claw_watch_global_optspecs
    string join \n state-dir= agent= all-agents store= config= now= json ndjson layout= offline via-gateway table color= db= schema= h/help V/version
end

function __fish_claw_watch_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_claw_watch_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_claw_watch_using_subcommand
    set -l cmd (__fish_claw_watch_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c claw-watch -n "__fish_claw_watch_needs_command" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l json -d 'Print one JSON document'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l ndjson -d 'Print one JSON object per line'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -s V -l version -d 'Print version'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -f -a "add" -d 'Register WATCHER on TARGET as sessions_send watch:true does: seeded at the target\'s current version (prior history never notifies); an ambient cursor becomes explicit'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -f -a "list" -d 'List cursors with their watermarks, state and provenance (NDJSON unless on a terminal)'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -f -a "pending" -d 'Print the pending notices (one line per pending watcher/target pair), changing nothing'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -f -a "drain" -d 'Print WATCHER\'s pending notices and acknowledge them (last seen := notified; one follow-up opened where changes interleaved), in one transaction'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -f -a "sweep" -d 'Do to the cursors what a gateway start does: re-open the notices of cursors behind their material watermark (for watchers whose session exists), then prune'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -f -a "reset" -d 'Forget WATCHER\'s cursors, as a reset of the watcher session does (its targets\' history and cursors watching it are kept)'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -f -a "follow" -d 'Stream notices as any process records events, until interrupted (reacts within 100 ms; sleeps on file-change notifications, no busy polling)'
complete -c claw-watch -n "__fish_claw_watch_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l target-agent -d 'The agent whose head of TARGET seeds the cursor (default: the target key\'s)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l ambient -d 'Register the gateway\'s ambient group watch instead (a main session on one of its group sessions: queue-only notices; an existing cursor is left unchanged)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l json -d 'Print one JSON document'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l ndjson -d 'Print one JSON object per line'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand add" -s h -l help -d 'Print help'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l watcher -d 'Only this watcher' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l target -d 'Only this target' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l pending -d 'Only cursors with a pending notice that reaches the watcher (those that never do are left out, and counted on stderr)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l undeliverable -d 'Only pending cursors whose notices never reach the watcher, with the reason (`undeliverable`: no-store, store-replaced, watcher-missing)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l json -d 'Print one JSON document'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l ndjson -d 'Print one JSON object per line'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand list" -s h -l help -d 'Print help'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l json -d 'Print one JSON document'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l ndjson -d 'Print one JSON object per line'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand pending" -s h -l help -d 'Print help'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l json -d 'Print one JSON document'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l ndjson -d 'Print one JSON object per line'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand drain" -s h -l help -d 'Print help'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l all-watchers -d 'Treat every watcher session as existing (skip the session-store check)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l dry-run -d 'Show what would be re-opened; change nothing'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l json -d 'Print one JSON document'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l ndjson -d 'Print one JSON object per line'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand sweep" -s h -l help -d 'Print help'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l dry-run -d 'Count what would be deleted; change nothing'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l json -d 'Print one JSON document'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l ndjson -d 'Print one JSON object per line'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand reset" -s h -l help -d 'Print help'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l for -d 'Stop after this long (e.g. 30s, 5m)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l safety-tick -d 'Re-check this often without a change notification (default 2s; shorten it where inotify misses other hosts\' writes, e.g. on NFS)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l db -d 'The shared state database (default: <stateDir>/state/openclaw.sqlite)' -r -F
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l schema -d 'The state schema of the host\'s gateway, which decides what a missing database is created as: auto (openclaw.json\'s meta.lastTouchedVersion; 15 when it has none) or N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing database\'s own schema always decides' -r
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l drain -d 'Acknowledge each notice as it is printed, so follow-ups stream too'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l new-only -d 'Only notices that become pending after the start'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l json -d 'Print one JSON document'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l ndjson -d 'Print one JSON object per line'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand follow" -s h -l help -d 'Print help'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand help; and not __fish_seen_subcommand_from add list pending drain sweep reset follow help" -f -a "add" -d 'Register WATCHER on TARGET as sessions_send watch:true does: seeded at the target\'s current version (prior history never notifies); an ambient cursor becomes explicit'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand help; and not __fish_seen_subcommand_from add list pending drain sweep reset follow help" -f -a "list" -d 'List cursors with their watermarks, state and provenance (NDJSON unless on a terminal)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand help; and not __fish_seen_subcommand_from add list pending drain sweep reset follow help" -f -a "pending" -d 'Print the pending notices (one line per pending watcher/target pair), changing nothing'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand help; and not __fish_seen_subcommand_from add list pending drain sweep reset follow help" -f -a "drain" -d 'Print WATCHER\'s pending notices and acknowledge them (last seen := notified; one follow-up opened where changes interleaved), in one transaction'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand help; and not __fish_seen_subcommand_from add list pending drain sweep reset follow help" -f -a "sweep" -d 'Do to the cursors what a gateway start does: re-open the notices of cursors behind their material watermark (for watchers whose session exists), then prune'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand help; and not __fish_seen_subcommand_from add list pending drain sweep reset follow help" -f -a "reset" -d 'Forget WATCHER\'s cursors, as a reset of the watcher session does (its targets\' history and cursors watching it are kept)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand help; and not __fish_seen_subcommand_from add list pending drain sweep reset follow help" -f -a "follow" -d 'Stream notices as any process records events, until interrupted (reacts within 100 ms; sleeps on file-change notifications, no busy polling)'
complete -c claw-watch -n "__fish_claw_watch_using_subcommand help; and not __fish_seen_subcommand_from add list pending drain sweep reset follow help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
