#!/usr/bin/env bash
# Runs every test: starts the real stores (installing what is missing), then the whole Maven build with unit and
# integration tests. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/services.sh
./mvnw -B verify "$@"
