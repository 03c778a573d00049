# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_claw_compact_global_optspecs
    string join \n state-dir= agent= all-agents store= config= now= json ndjson layout= offline via-gateway table color= h/help V/version
end

function __fish_claw_compact_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_claw_compact_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_claw_compact_using_subcommand
    set -l cmd (__fish_claw_compact_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c claw-compact -n "__fish_claw_compact_needs_command" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l json -d 'Print one JSON document'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l ndjson -d 'Print one JSON object per line'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -s V -l version -d 'Print version'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -f -a "check" -d 'Whether compaction is due (the gateway\'s settings and triggers: context window, reserve, thresholds); JSON'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -f -a "plan" -d 'prepareCompaction: the cut point, split turn, summarised and kept entries, files'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -f -a "run" -d 'Compact now: append the compaction entry and update the store'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -f -a "truncate" -d '`sessions compact --max-lines N`: keep the header and the last N-1 lines'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -f -a "auto" -d 'For cron: compact the session (or every session with --all) when due, one JSON line each'
complete -c claw-compact -n "__fish_claw_compact_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l context-window -d 'Context window W (default: the model\'s in models.providers, the entry\'s contextTokens, else 200000; capped by agents.defaults.contextTokens)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l reserve-tokens -d 'reserveTokens before the floor and caps (default: agents.defaults.compaction.reserveTokens, else 16384)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l reserve-tokens-floor -d 'reserveTokensFloor (default: config, else 20000; 0 disables)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l keep-recent-tokens -d 'keepRecentTokens (default: config, else 20000)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l overhead-tokens -d 'Fixed prompt overhead of every turn, in tokens, added to an estimated context' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l quiet -d 'Print nothing; exit 0 when compaction is due, 1 when not'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l dry-run -d 'Accepted for symmetry; check never writes'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l json -d 'Print one JSON document'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l ndjson -d 'Print one JSON object per line'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l context-window -d 'Context window W (default: the model\'s in models.providers, the entry\'s contextTokens, else 200000; capped by agents.defaults.contextTokens)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l reserve-tokens -d 'reserveTokens before the floor and caps (default: agents.defaults.compaction.reserveTokens, else 16384)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l reserve-tokens-floor -d 'reserveTokensFloor (default: config, else 20000; 0 disables)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l keep-recent-tokens -d 'keepRecentTokens (default: config, else 20000)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l overhead-tokens -d 'Fixed prompt overhead of every turn, in tokens, added to an estimated context' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l messages -d 'Include the converted messages that would be summarised'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l dry-run -d 'Accepted for symmetry; plan never writes'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l json -d 'Print one JSON document'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l ndjson -d 'Print one JSON object per line'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l context-window -d 'Context window W (default: the model\'s in models.providers, the entry\'s contextTokens, else 200000; capped by agents.defaults.contextTokens)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l reserve-tokens -d 'reserveTokens before the floor and caps (default: agents.defaults.compaction.reserveTokens, else 16384)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l reserve-tokens-floor -d 'reserveTokensFloor (default: config, else 20000; 0 disables)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l keep-recent-tokens -d 'keepRecentTokens (default: config, else 20000)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l summarizer -d 'Shell command that gets the prompt on stdin and prints the summary on stdout' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l summarizer-timeout -d 'Seconds one --summarizer call may run before it is killed (at least 1)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l summary-file -d 'Use this file\'s text as the summary' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l instructions -d 'Extra focus for the summary (`/compact <instructions>`)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l wait -d 'Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l rotate -d 'Write the truncateAfterCompaction successor and point the store at it'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l keep-tail -d 'Keep the recent tail in context: skip the manual hardening rule (implied when the config sets agents.defaults.compaction.keepRecentTokens)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l no-repair -d 'Refuse (65) a transcript the gateway\'s repair pass would change, instead of repairing it first'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l dry-run -d 'Show what would be written; write nothing'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l no-wait -d 'Exit 75 at once when another clawstate process writes the store (--wait 0)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l json -d 'Print one JSON document'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l ndjson -d 'Print one JSON object per line'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l max-lines -d 'Lines to keep, header included (at least 1)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l wait -d 'Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l dry-run -d 'Show what would be written; write nothing'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l no-wait -d 'Exit 75 at once when another clawstate process writes the store (--wait 0)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l json -d 'Print one JSON document'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l ndjson -d 'Print one JSON object per line'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand truncate" -s h -l help -d 'Print help'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l context-window -d 'Context window W (default: the model\'s in models.providers, the entry\'s contextTokens, else 200000; capped by agents.defaults.contextTokens)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l reserve-tokens -d 'reserveTokens before the floor and caps (default: agents.defaults.compaction.reserveTokens, else 16384)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l reserve-tokens-floor -d 'reserveTokensFloor (default: config, else 20000; 0 disables)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l keep-recent-tokens -d 'keepRecentTokens (default: config, else 20000)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l summarizer -d 'Shell command that gets the prompt on stdin and prints the summary on stdout' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l summarizer-timeout -d 'Seconds one --summarizer call may run before it is killed (at least 1)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l summary-file -d 'Use this file\'s text as the summary' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l instructions -d 'Extra focus for the summary (`/compact <instructions>`)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l overhead-tokens -d 'Fixed prompt overhead of every turn, in tokens, added to an estimated context' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l wait -d 'Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l state-dir -d 'OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l agent -d 'Agent whose store to use (default: the configured default agent); several: ID,ID' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l store -d 'Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l config -d 'Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names)' -r -F
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l now -d 'The clock: epoch milliseconds or ISO-8601 (default: the system clock)' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l layout -d 'Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent SQLite database); default: per agent, the database when present' -r
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l color -d 'Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never' -r -f -a "auto\t'On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and not empty)'
always\t'Always, into a pipe too (and despite `NO_COLOR`)'
never\t'Never'"
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l all -d 'Every session of the selected agent(s)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l rotate -d 'Rotate even when the config does not set truncateAfterCompaction'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l no-repair -d 'Refuse (65) a transcript the gateway\'s repair pass would change, instead of repairing it first'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l dry-run -d 'Show what would be done; write nothing'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l no-wait -d 'Exit 75 at once when another clawstate process writes the store (--wait 0)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l all-agents -d 'Every configured agent\'s store'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l json -d 'Print one JSON document'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l ndjson -d 'Print one JSON object per line'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l offline -d 'Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l via-gateway -d 'Send the write to the gateway\'s RPC even if no live gateway was detected (75 when it cannot be reached)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -l table -d 'Print a listing as a table even when stdout is not a terminal (piped, a listing is NDJSON)'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand auto" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand help; and not __fish_seen_subcommand_from check plan run truncate auto help" -f -a "check" -d 'Whether compaction is due (the gateway\'s settings and triggers: context window, reserve, thresholds); JSON'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand help; and not __fish_seen_subcommand_from check plan run truncate auto help" -f -a "plan" -d 'prepareCompaction: the cut point, split turn, summarised and kept entries, files'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand help; and not __fish_seen_subcommand_from check plan run truncate auto help" -f -a "run" -d 'Compact now: append the compaction entry and update the store'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand help; and not __fish_seen_subcommand_from check plan run truncate auto help" -f -a "truncate" -d '`sessions compact --max-lines N`: keep the header and the last N-1 lines'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand help; and not __fish_seen_subcommand_from check plan run truncate auto help" -f -a "auto" -d 'For cron: compact the session (or every session with --all) when due, one JSON line each'
complete -c claw-compact -n "__fish_claw_compact_using_subcommand help; and not __fish_seen_subcommand_from check plan run truncate auto help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
