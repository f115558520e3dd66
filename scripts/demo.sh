#!/usr/bin/env bash
# The main job: a short tour of esctl on a fresh local store in .demo/store.
# Run it through `make demo`, which installs LMDB and builds esctl first.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="$(swift build --show-bin-path)"
export ESCTL_DB="$PWD/.demo/store"
rm -rf .demo
mkdir -p .demo
esctl() { "$bin/esctl" "$@"; }
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s$ esctl %s%s\n' "$bold" "$*" "$plain"; }

step append orders-1 OrderPlaced --data '{"total":12}'
esctl append orders-1 OrderPlaced --data '{"total":12}'
step append orders-1 OrderPaid --expected-version 1 --json
esctl append orders-1 OrderPaid --expected-version 1 --json
step append chat-main Said --data '{"text":"hello"}' --metadata '{"by":"ann"}'
esctl append chat-main Said --data '{"text":"hello"}' --metadata '{"by":"ann"}'

step "append orders-1 OrderPaid --expected-version 1   (a stale expectation)"
set +e
esctl append orders-1 OrderPaid --expected-version 1
echo "exit code $? (65: version conflict; nothing was written)"
set -e

step read orders-1
esctl read orders-1
step replay --json
esctl replay --json
step replay --category orders- --type OrderPaid
esctl replay --category orders- --type OrderPaid
step "subscribe --category orders- --count 3   (while another process appends)"
( sleep 0.3; esctl append orders-2 OrderPlaced --data '{"total":7}' >/dev/null ) &
esctl subscribe --from-start --category orders- --count 3
wait
step stats
esctl stats

printf '\nThe store is in %s; try `ESCTL_DB=%s %s/esctl replay`.\n' "$ESCTL_DB" "$ESCTL_DB" "$bin"
