# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_claw_migrate_global_optspecs
    string join \n state-dir= agent= all-agents store= config= now= json ndjson layout= offline via-gateway table color= h/help V/version
end

function __fish_claw_migrate_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_claw_migrate_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_claw_migrate_using_subcommand
    set -l cmd (__fish_claw_migrate_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l json -d 'Print one JSON document'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l ndjson -d 'Print one JSON object per line'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -s V -l version -d 'Print version'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -f -a "plan" -d 'What an import would do with every legacy entry and transcript (changes nothing)'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -f -a "import" -d 'Import the legacy files into the agent database as 2026.9.6\'s doctor does'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -f -a "verify" -d 'Check that every legacy event is in the agent database and nothing else changed'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -f -a "export" -d 'Write the agent database back as sessions.json and JSONL transcripts'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -f -a "finish" -d 'Finish a stuck migration: leftover legacy JSONL, half-written manifests, orphan archives'
complete -c claw-migrate -n "__fish_claw_migrate_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l dry-run -d 'Accepted for symmetry with the other steps; `plan` never writes'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l json -d 'Print one JSON document'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l ndjson -d 'Print one JSON object per line'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand plan" -s h -l help -d 'Print help'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l dry-run -d 'Show what would be imported and archived; change nothing'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l json -d 'Print one JSON document'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l ndjson -d 'Print one JSON object per line'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand import" -s h -l help -d 'Print help'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l quiet -d 'Print only the problems, not the information lines (torn tails, sessions created after the migration)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l json -d 'Print one JSON document'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l ndjson -d 'Print one JSON object per line'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand verify" -s h -l help -d 'Print help'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l out -d 'Write into this fresh (missing or empty) directory, laid out as a state dir (`DIR/agents/<id>/sessions/`); without it, into each agent\'s own legacy sessions directory, only if it holds no sessions.json and no gateway is running' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l session -d 'Export only this session (a store key; `main` and other short keys resolve as the gateway resolves them)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -s o -l output -d 'With --session: write its transcript to FILE (`-` for stdout) instead of a layout' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l dry-run -d 'Show what would be written; write nothing'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l json -d 'Print one JSON document'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l ndjson -d 'Print one JSON object per line'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand export" -s h -l help -d 'Print help'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l dry-run -d 'Only print what would be done (the default; nothing is changed)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l apply -d 'Do it: import missing tails and archived transcripts without rows, move leftovers into the import archive, close runs'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l json -d 'Print one JSON document'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l ndjson -d 'Print one JSON object per line'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand finish" -s h -l help -d 'Print help'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand help; and not __fish_seen_subcommand_from plan import verify export finish help" -f -a "plan" -d 'What an import would do with every legacy entry and transcript (changes nothing)'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand help; and not __fish_seen_subcommand_from plan import verify export finish help" -f -a "import" -d 'Import the legacy files into the agent database as 2026.9.6\'s doctor does'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand help; and not __fish_seen_subcommand_from plan import verify export finish help" -f -a "verify" -d 'Check that every legacy event is in the agent database and nothing else changed'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand help; and not __fish_seen_subcommand_from plan import verify export finish help" -f -a "export" -d 'Write the agent database back as sessions.json and JSONL transcripts'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand help; and not __fish_seen_subcommand_from plan import verify export finish help" -f -a "finish" -d 'Finish a stuck migration: leftover legacy JSONL, half-written manifests, orphan archives'
complete -c claw-migrate -n "__fish_claw_migrate_using_subcommand help; and not __fish_seen_subcommand_from plan import verify export finish help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
