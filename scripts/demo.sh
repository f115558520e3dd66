#!/usr/bin/env bash
# The main job: the four apps on a fresh local store in .demo/store, through esctl.
# A workout that crosses every milestone, then is caught by Nessie on a second try; a chat
# countdown; a campground season with rejected bookings; the color calculator's five fixed
# defects; the read models as tables.
# Run it through `make demo`, which installs LMDB and builds esctl first.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="$(swift build --show-bin-path)"
export ESCTL_DB="$PWD/.demo/store"
rm -rf .demo
mkdir -p .demo
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
section() { printf '\n%s== %s ==%s\n' "$bold" "$*" "$plain"; }
# Echo the command as typed (quoting the words with spaces), then run it.
esctl() {
  local shown="" word
  for word in "$@"; do
    if [[ $word == *[[:space:]]* ]]; then shown+=" '$word'"; else shown+=" $word"; fi
  done
  printf '%s$ esctl%s%s\n' "$bold" "$shown" "$plain"
  "$bin/esctl" "$@"
}
# A command the apps' rules refuse or record as invalid: show the exit code and go on.
refused() { esctl "$@" || echo "(exit code $?: refused, as the rules say)"; }

section "Fitness: a workout that crosses every milestone"
refused fitness start --user nessie-fan
esctl fitness goal 400 --user nessie-fan
esctl fitness start --user nessie-fan
esctl fitness walk --steps 100 --distance 80 --user nessie-fan
esctl fitness walk --steps 150 --distance 120 --user nessie-fan
esctl fitness nessie 60 --user nessie-fan
esctl fitness walk --steps 150 --distance 120 --user nessie-fan
esctl query alerts --user nessie-fan

section "Fitness: the second try, caught by Nessie"
esctl fitness restart --user nessie-fan
esctl alerts clear --all --user nessie-fan
esctl fitness goal 1000 --user nessie-fan
esctl fitness start --user nessie-fan
esctl fitness walk --steps 200 --distance 150 --user nessie-fan
esctl fitness nessie 80 --user nessie-fan
esctl fitness nessie 140 --user nessie-fan
esctl fitness nessie 150 --user nessie-fan
esctl query app-state --user nessie-fan
esctl query alerts --user nessie-fan

section "Chat: a countdown"
esctl chat connect --user ann --room loch
esctl chat say "Ready for the race?" --user ann --room loch
esctl chat countdown "Go!" --user ann --room loch --interval 0.2
esctl chat location "Loch Ness, Scotland" --user bob --room loch
esctl chat away --user bob --room loch
esctl query messages --room loch

section "Campground: a season with rejected bookings"
esctl camp add-camper "Johnny Appleseed" 408-555-1234
esctl camp add-camper "Bacon Lover" 910-543-9000
for site in 1 10 30 31; do esctl camp add-site "$site"; done
esctl camp add-site 15 --electricity --water
refused camp add-site 15
esctl camp reserve --site 15 --camper C1 --date 2026-07-01 --nights 3
refused camp reserve --site 15 --camper C2 --date 2026-07-02 --nights 2
refused camp reserve --site 10 --camper C2 --date 2026-07-02 --nights -1
esctl camp reserve --site 10 --camper C2 --date 2026-07-02 --nights 4
esctl camp cancel R4
esctl query campers
esctl query campsites
esctl query reservations
esctl query reservations --date 2026-07-02

section "Color calculator: the five defects its testers found, fixed"
esctl color set 006636AA --calculator lab        # 1: the name is rwGreen 66%
esctl color press backspace --calculator fresh    # 2: from the start #0080FF, one digit removed
esctl color set 006636 --calculator lab            # 3: a color for rwGreen's hex...
esctl color press backspace --calculator lab       #    ...and white when none can be derived
esctl color press clear --calculator lab           # 4: clear gives #
esctl color set '#006636AA' --calculator lab --json # 5: 0, 102, 54, 170 on the 0-255 scale
refused color press G --calculator lab
esctl query color --calculator lab

section "The log and the read models"
esctl stats
esctl rebuild --all
esctl projections

printf '\nThe store is in %s; try `ESCTL_DB=%s %s/esctl replay`.\n' "$ESCTL_DB" "$ESCTL_DB" "$bin"
