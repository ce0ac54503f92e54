#!/usr/bin/env bash
# Runs distlock's safety suite (module distlock-safety: real faults on every backend, judged by the testkit's
# history checker) and regenerates the results table of docs/safety.md from what it wrote.
#
#   scripts/faults.sh               tier 1: what every build runs (about 10 minutes on 2 cores)
#   scripts/faults.sh --tier 2      tier 2: the remaining scenarios and the soak (not in CI; 30-60 minutes)
#   scripts/faults.sh --all         both tiers
#   scripts/faults.sh --report      only regenerate docs/safety.md from distlock-safety/target/safety-results
#
# The tables are merged (safety-report.py --merge): the rows of a scenario and backend this run did not produce stay
# as docs/safety.md had them, so a run of one backend or one tier updates only its own rows.
#
# Arguments after these go to Maven, e.g. -o (offline), -Dsafety.seed=123 (replay one seed),
# -Dsafety.soak.seconds=1800 (a longer soak), -Dit.test='EtcdSafetyIT' (one backend).
# Each scenario prints its seed and fault schedule and keeps its histories under
# distlock-safety/target/histories/<scenario>/<backend>/<seed>/.
set -euo pipefail
cd "$(dirname "$0")/.."

groups=tier1
report_only=""
case "${1:-}" in
  --tier)
    case "${2:-}" in
      1) groups=tier1 ;;
      2) groups=tier2 ;;
      *) echo "faults.sh: --tier takes 1 or 2, not '${2:-}'" >&2; exit 2 ;;
    esac
    shift 2 ;;
  --all) groups="tier1 | tier2"; shift ;;
  --report) report_only=1; shift ;;
esac

if [ -z "$report_only" ]; then
  scripts/services.sh
  ./mvnw -B verify -pl distlock-safety -am -Dmaven.javadoc.skip=true -Dmaven.source.skip=true \
    -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test='io/distlock/safety/*IT' \
    -Dfailsafe.failIfNoSpecifiedTests=false -DskipITs=false \
    "-Dsafety.groups=$groups" -Dsafety.excludedGroups=none "$@" || status=$?
fi
python3 scripts/safety-report.py --merge distlock-safety/target/safety-results docs/safety.md
exit "${status:-0}"
