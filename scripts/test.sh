#!/usr/bin/env bash
# Runs every test: starts the real stores (installing what is missing), then the whole Maven build with unit and
# integration tests on the default JDK (17 is the baseline). Where a JDK 21+ is present (these machines carry
# Temurin 25), the in-memory and Redis contract suites run once more on it, so that the virtual-thread contract tests
# run on real virtual threads. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/services.sh
./mvnw -B verify "$@"

for jdk in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-21-jdk-amd64; do
  if [ -x "$jdk/bin/java" ]; then
    echo "test.sh: contract suite on $jdk (virtual threads)"
    JAVA_HOME="$jdk" ./mvnw -B surefire:test -pl distlock-testkit -Dtest='InMemory*LockClientTest,StrictQueueHandOffTest'
    # and the Redis contract, whose waits keep state per thread (AwaitDeadlines): one slot per virtual thread
    JAVA_HOME="$jdk" ./mvnw -B failsafe:integration-test failsafe:verify -pl distlock-redis -Dit.test=RedisLockIT
    break
  fi
done
