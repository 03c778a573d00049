# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_claw_sessions_global_optspecs
    string join \n state-dir= agent= all-agents store= config= now= json ndjson layout= offline via-gateway table color= active= limit= kinds= live verbose older-than= sort= h/help V/version
end

function __fish_claw_sessions_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_claw_sessions_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_claw_sessions_using_subcommand
    set -l cmd (__fish_claw_sessions_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l active -d 'Only sessions updated within the last MIN minutes' -r
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l limit -d 'At most N rows (default 100), or `all`' -r
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l kinds -d 'Only these kinds (comma-separated): the Kind column\'s direct, spawn-child, group, global, cron, unknown, or the gateway tool\'s main, group, cron, hook, node, other' -r
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l older-than -d 'Only sessions not updated for at least DURATION (`7d`, `12h`; a bare number is days)' -r
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l sort -d 'Row order before --limit: updated (newest first, the default), size (largest transcript first) or tokens (most totalTokens first)' -r
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l live -d 'Ask the running gateway (`sessions.list`, its in-memory view) instead of reading the store'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -l verbose -d 'Accepted for `openclaw sessions --verbose`; the listing is the same'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -s V -l version -d 'Print version'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "list" -d 'List sessions, newest first (the envelope of `openclaw sessions --json`)'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "show" -d 'Show one entry (by session key or sessionId) and its transcript path'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "patch" -d 'Change fields of entries: --set FIELD=JSON, --unset FIELD, or --merge - (RFC 7386 patch on stdin)'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "reset" -d 'Start a new session for a key, as the gateway\'s sessions.reset does on disk'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "delete" -d 'Remove entries; archive their transcripts as .deleted.<ts> unless shared'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "relocate" -d 'Point the entries of a moved or restored state dir back at it'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "restore" -d 'Undo an archive: bring back a .deleted.<ts> / .reset.<ts> transcript'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "resolve" -d 'Whether a session is still fresh under the config\'s reset policy'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "policy" -d 'The sendPolicy decision for a session, and the rule that made it'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "cleanup" -d 'Session-store maintenance, exactly as `openclaw sessions cleanup`'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "doctor" -d 'One health check of the state directory, read only'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "du" -d 'Where the bytes of the agent database are (the 2026.8+ layout)'
complete -c claw-sessions -n "__fish_claw_sessions_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l active -d 'Only sessions updated within the last MIN minutes' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l limit -d 'At most N rows (default 100), or `all`' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l kinds -d 'Only these kinds (comma-separated): the Kind column\'s direct, spawn-child, group, global, cron, unknown, or the gateway tool\'s main, group, cron, hook, node, other' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l older-than -d 'Only sessions not updated for at least DURATION (`7d`, `12h`; a bare number is days)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l sort -d 'Row order before --limit: updated (newest first, the default), size (largest transcript first) or tokens (most totalTokens first)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l live -d 'Ask the running gateway (`sessions.list`, its in-memory view) instead of reading the store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l verbose -d 'Accepted for `openclaw sessions --verbose`; the listing is the same'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand show" -s h -l help -d 'Print help'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l set -d 'Set a field to a JSON value (a bare word is taken as a string); dots reach into objects' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l unset -d 'Remove a field (dots reach into objects)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l merge -d 'Read an RFC 7386 JSON merge patch from FILE (`-` for stdin)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l wait -d 'Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l stdin -d 'Also read keys from stdin, one per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l dry-run -d 'Show what would change; write nothing'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l no-wait -d 'Exit 75 at once when another clawstate process writes the store (--wait 0)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand patch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l wait -d 'Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l dry-run -d 'Show what would change; write nothing'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l no-wait -d 'Exit 75 at once when another clawstate process writes the store (--wait 0)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand reset" -s h -l help -d 'Print help'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l wait -d 'Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l stdin -d 'Also read keys from stdin, one per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l dry-run -d 'Show what would change; write nothing'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l no-wait -d 'Exit 75 at once when another clawstate process writes the store (--wait 0)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand delete" -s h -l help -d 'Print help'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l wait -d 'Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l dry-run -d 'Show what would change; write nothing'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l no-wait -d 'Exit 75 at once when another clawstate process writes the store (--wait 0)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand relocate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l key -d 'The key of the entry to add when the store has none for the archive\'s session' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l wait -d 'Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l dry-run -d 'Show what would change; write nothing'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l no-wait -d 'Exit 75 at once when another clawstate process writes the store (--wait 0)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand restore" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand resolve" -s h -l help -d 'Print help'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l channel -d 'The channel of the send (default: from the entry or key)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l chat-type -d 'The chat type of the send: direct, group, channel' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand policy" -s h -l help -d 'Print help'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l active-key -d 'Never prune, cap, evict or retire this session key' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l wait -d 'Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l dry-run -d 'Preview what would be pruned or capped; write nothing'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l enforce -d 'Apply maintenance even when session.maintenance.mode is "warn"'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l fix-missing -d 'Remove entries whose transcript is missing or holds no message; repair stale generated sessionFile paths'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l fix-dm-scope -d 'With session.dmScope "main", retire the agent\'s per-peer direct-message entries'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -s v -l verbose -d 'Log every file archived or removed (stderr) and print the per-key action table (with --ndjson, one row per entry and file changed before each store\'s summary, as --dry-run --ndjson prints what it would change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l no-wait -d 'Exit 75 at once when another clawstate process writes the store (--wait 0)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand cleanup" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l severity -d 'Report findings of this severity and above: error, warning or info (default)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l summary -d 'Print the counts per finding code instead of each finding'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l top -d 'How many sessions (text) and largest events to show' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l json -d 'Print one JSON document'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l ndjson -d 'Print one JSON object per line'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand du" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "list" -d 'List sessions, newest first (the envelope of `openclaw sessions --json`)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "show" -d 'Show one entry (by session key or sessionId) and its transcript path'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "patch" -d 'Change fields of entries: --set FIELD=JSON, --unset FIELD, or --merge - (RFC 7386 patch on stdin)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "reset" -d 'Start a new session for a key, as the gateway\'s sessions.reset does on disk'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "delete" -d 'Remove entries; archive their transcripts as .deleted.<ts> unless shared'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "relocate" -d 'Point the entries of a moved or restored state dir back at it'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "restore" -d 'Undo an archive: bring back a .deleted.<ts> / .reset.<ts> transcript'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "resolve" -d 'Whether a session is still fresh under the config\'s reset policy'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "policy" -d 'The sendPolicy decision for a session, and the rule that made it'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "cleanup" -d 'Session-store maintenance, exactly as `openclaw sessions cleanup`'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "doctor" -d 'One health check of the state directory, read only'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "du" -d 'Where the bytes of the agent database are (the 2026.8+ layout)'
complete -c claw-sessions -n "__fish_claw_sessions_using_subcommand help; and not __fish_seen_subcommand_from list show patch reset delete relocate restore resolve policy cleanup doctor du help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
