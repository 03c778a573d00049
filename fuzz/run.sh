#!/usr/bin/env bash
# Runs the AFL++ fuzz targets, each for a fixed wall time, and prints a summary line per
# target (executions, corpus, edge coverage, crashes, hangs). See fuzz/README.md.
#
#   fuzz/run.sh [-s SECONDS] [-j PARALLEL] [TARGET...]   (default: 600 s, 2 at a time, all targets)
#
# Needs cargo-afl (`cargo install cargo-afl`, which also builds AFL++). Runs at nice 19
# and without CPU pinning, so other work on the machine is not starved. Outputs go to
# fuzz/out/TARGET/ (crashes in default/crashes/, hangs in default/hangs/); reproduce one
# with `cargo run --release -- replay TARGET FILE` from fuzz/. AFL_TARGET_BIN=PATH skips the
# build and uses that afl-target binary.
set -euo pipefail
cd "$(dirname "$0")"
secs=600
par=2
while getopts "s:j:" o; do
  case $o in
    s) secs=$OPTARG ;;
    j) par=$OPTARG ;;
    *) sed -n 2,11p "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(store transcript session_key units config patch)
command -v cargo-afl >/dev/null || { echo "run.sh: cargo-afl not found (cargo install cargo-afl)" >&2; exit 127; }

# Instrumented builds get their own target dir, so the plain driver's stays valid.
if [[ -n ${AFL_TARGET_BIN:-} ]]; then
  bin=$(realpath "$AFL_TARGET_BIN")
else
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target/afl}
  nice -n 19 cargo afl build --release --features afl --bin afl-target >&2
  bin=$CARGO_TARGET_DIR/release/afl-target
fi

export AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
  AFL_SKIP_CRASHES=1 AFL_IGNORE_SEED_PROBLEMS=1

run_one() {
  local t=$1 out=out/$1
  rm -rf "$out"
  mkdir -p out
  # -x: tokens (JSON syntax, field names, key shapes); -t: an input running longer than
  # 2 s is a hang; -V: stop after $secs seconds.
  nice -n 19 cargo afl fuzz -i "corpus/$t" -o "$out" -x dict/clawstate.dict -t 2000 -m none -V "$secs" -- "$bin" "$t" \
    >"out/$t.log" 2>&1 || true
  summary "$t"
}

summary() {
  local s=out/$1/default/fuzzer_stats
  if [[ ! -f $s ]]; then echo "$1: no stats (see fuzz/out/$1.log)"; return; fi
  awk -F' *: *' -v t="$1" '
    { v[$1] = $2 }
    END { printf "%-12s run %ss  execs %s (%s/s)  corpus %s  edges %s (%s)  crashes %s  hangs %s\n",
          t, v["run_time"], v["execs_done"], v["execs_per_sec"], v["corpus_count"],
          v["edges_found"], v["bitmap_cvg"], v["saved_crashes"], v["saved_hangs"] }' "$s"
}

pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if (( ${#pids[@]} >= par )); then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
wait
sleep 1
# Sandboxes of killed fuzzer processes (named by pid).
for d in /dev/shm/clawstate-fuzz-* "${TMPDIR:-/tmp}"/clawstate-fuzz-*; do
  [[ -d $d ]] || continue
  pid=${d##*clawstate-fuzz-}; pid=${pid%%-*}
  kill -0 "$pid" 2>/dev/null || rm -rf "$d"
done
