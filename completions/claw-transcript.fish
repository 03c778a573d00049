# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_claw_transcript_global_optspecs
    string join \n state-dir= agent= all-agents store= config= now= json ndjson layout= offline via-gateway table color= h/help V/version
end

function __fish_claw_transcript_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_claw_transcript_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_claw_transcript_using_subcommand
    set -l cmd (__fish_claw_transcript_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -s V -l version -d 'Print version'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "cat" -d 'Print the rows in file order, or only the active branch: a table on a terminal, one JSON object per line when piped (or --ndjson), one array with --json'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "history" -d 'The sessions_history result: display projection, 4000-char texts, 80 KiB cap'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "tail" -d 'The last N visible messages; --follow prints new ones as they are appended'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "tree" -d 'An ASCII tree of the entries: labels shown, the current leaf marked with `*`'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "context" -d 'The messages the model receives (after compaction and the gateway\'s replay normalisation), as JSON'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "stats" -d 'Rows by type and role, bytes, estimated and recorded tokens, branches'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "check" -d 'Validate transcripts; one finding per line; exit 65 when any error is found'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "repair" -d 'The gateway\'s repair pass (and header recovery), atomically under the write lock'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "migrate" -d 'Rewrite a version 1 or 2 transcript as version 3 (and recover a missing header first, as the gateway does)'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "append" -d 'Append a message as the gateway appender does (a message JSON object on stdin, or --role and --text)'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "lock" -d 'Transcript write locks: status and break'
complete -c claw-transcript -n "__fish_claw_transcript_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l branch -d 'Only the entries of the active branch, root to leaf, with logical parents'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand cat" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l limit -d 'At most N messages (default 200, at most 1000)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l offset -d 'Page back from the newest message (adds pagination fields)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l include-tools -d 'Keep tool results'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l page -d 'Print the gateway\'s `chat.history` page instead of the tool result'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand history" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -s n -l lines -d 'How many messages' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -s f -l follow -d 'Keep printing messages appended later (survives truncation and rotation)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l raw -d 'Raw transcript messages (no display projection)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tail" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand tree" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l api -d 'The model API the replay is for (`openai-completions`, `anthropic-messages`, …)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l raw -d 'The agent messages before the replay normalisation and the LLM conversion'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l no-replay -d 'The LLM conversion of the rebuilt context without the replay normalisation'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand context" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand stats" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l severity -d 'Report findings of this severity and above: error, warning or info (default)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l all -d 'Every transcript of the agent(s), cross-checked with the store and lock files (progress on stderr at a terminal)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l summary -d 'Print the counts per finding code instead of each finding'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l integrity -d 'On the agent DB layout: `PRAGMA integrity_check` instead of the faster `quick_check`'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand check" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l trim-torn-tail -d 'Only remove a torn (cut-off) last line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l dry-run -d 'Show what would change; write nothing'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand repair" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l dry-run -d 'Show what would change; write nothing'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand migrate" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l role -d 'The role of a message given with --text' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l text -d 'The text of the message' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l no-dedupe -d 'Append even when a row with the same idempotencyKey exists'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l dry-run -d 'Show what would change; write nothing'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand append" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -f -a "status" -d 'The doctor\'s view of a transcript\'s lock (or of every lock with --all)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -f -a "break" -d 'Remove a lock the doctor would remove (stale and not only too-old); --force for any'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and not __fish_seen_subcommand_from status break help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l all -d 'Every *.jsonl.lock of the agent(s)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l force -d 'Remove it even when its holder looks alive and legitimate'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l dry-run -d 'Show what would change; write nothing'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l json -d 'Print one JSON document'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l ndjson -d 'Print one JSON object per line'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from break" -s h -l help -d 'Print help'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from help" -f -a "status" -d 'The doctor\'s view of a transcript\'s lock (or of every lock with --all)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from help" -f -a "break" -d 'Remove a lock the doctor would remove (stale and not only too-old); --force for any'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand lock; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "cat" -d 'Print the rows in file order, or only the active branch: a table on a terminal, one JSON object per line when piped (or --ndjson), one array with --json'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "history" -d 'The sessions_history result: display projection, 4000-char texts, 80 KiB cap'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "tail" -d 'The last N visible messages; --follow prints new ones as they are appended'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "tree" -d 'An ASCII tree of the entries: labels shown, the current leaf marked with `*`'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "context" -d 'The messages the model receives (after compaction and the gateway\'s replay normalisation), as JSON'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "stats" -d 'Rows by type and role, bytes, estimated and recorded tokens, branches'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "check" -d 'Validate transcripts; one finding per line; exit 65 when any error is found'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "repair" -d 'The gateway\'s repair pass (and header recovery), atomically under the write lock'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "migrate" -d 'Rewrite a version 1 or 2 transcript as version 3 (and recover a missing header first, as the gateway does)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "append" -d 'Append a message as the gateway appender does (a message JSON object on stdin, or --role and --text)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "lock" -d 'Transcript write locks: status and break'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and not __fish_seen_subcommand_from cat history tail tree context stats check repair migrate append lock help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and __fish_seen_subcommand_from lock" -f -a "status" -d 'The doctor\'s view of a transcript\'s lock (or of every lock with --all)'
complete -c claw-transcript -n "__fish_claw_transcript_using_subcommand help; and __fish_seen_subcommand_from lock" -f -a "break" -d 'Remove a lock the doctor would remove (stale and not only too-old); --force for any'
