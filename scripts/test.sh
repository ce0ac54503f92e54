#!/usr/bin/env bash
# Runs every test. This is the README's test command and all that CI runs (.ci/run calls it and nothing else).
#
#  1. Starts the real stores (scripts/services.sh installs what is missing).
#  2. Builds and installs the whole project, with every unit and integration test, on the default JDK (17 is the
#     baseline), into a local Maven repository of this checkout's own: target/local-repo. It holds no io.distlock
#     artifact but those this run installs: io/distlock is emptied first and never linked, while every other group is
#     a link into the shared ~/.m2/repository (nothing is downloaded twice). So the run passes where nothing was ever
#     installed, and neither an earlier install nor another build installing into ~/.m2 meanwhile can change what it
#     builds against. Then runs the Spring Boot starter's tests again, on Spring Boot 4 (its profile boot4, on the
#     classes just built; docs/spring-boot.md).
#  3. Builds samples/plain-java, a user's project outside the reactor, against those installed artifacts through
#     distlock-bom: compiles it, runs its unit test on InMemoryLockClient, and runs its main on the local Redis. A
#     broken BOM or a class missing from a published jar fails here.
#     Then samples/spring-boot-counter, a Spring Boot application on the starter, the same way: compiles it and runs
#     its tests (two application contexts counting on one embedded H2 database, the actuator endpoints).
#  4. Where the machine has a JDK 21+ (these machines carry Temurin 25), runs the virtual-thread tests on it, with
#     real virtual threads required (a JVM without them fails the tests): the in-memory contract suite, the Redis
#     contract suite, and counter_virtualThreads_noLostIncrements of every IT class of every backend that runs
#     MutualExclusionContract. Where there is none, says so and skips the step: the build needs only JDK 17.
#
# Arguments go to the Maven build of step 2 (e.g. -Dtiming.multiplier=2).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

# every deployed module must have its version in the BOM (modules that set maven.deploy.skip are not deployed)
for module in $(sed -n 's:.*<module>\(.*\)</module>.*:\1:p' pom.xml); do
  [ "$module" = distlock-bom ] && continue
  grep -q '<maven.deploy.skip>true</maven.deploy.skip>' "$module/pom.xml" && continue
  if ! grep -q "<artifactId>$module</artifactId>" distlock-bom/pom.xml; then
    echo "test.sh: $module is published but distlock-bom does not list it" >&2
    exit 1
  fi
done

scripts/services.sh

shared="$HOME/.m2/repository"
repo="$PWD/target/local-repo"
link_entries() { # FROM TO [LEAVE_OUT]: links each entry of FROM into TO, but LEAVE_OUT and what TO already has
  local from=$1 to=$2 leave_out=${3:-} entry
  mkdir -p "$to"
  find "$to" -maxdepth 1 -xtype l -delete # links whose target is gone
  [ -d "$from" ] || return 0
  for entry in "$from"/*; do
    [ -e "$entry" ] && [ "${entry##*/}" != "$leave_out" ] || continue
    [ -e "$to/${entry##*/}" ] || ln -s "$entry" "$to/${entry##*/}"
  done
}
rm -rf "$repo/io/distlock"
link_entries "$shared" "$repo" io
link_entries "$shared/io" "$repo/io" distlock
mvn() { ./mvnw -B -Dmaven.repo.local="$repo" "$@"; }

mvn install "$@"

echo "test.sh: distlock-spring-boot-starter's unit tests and ITs again, on Spring Boot 4"
mvn verify -pl distlock-spring-boot-starter -Pboot4 "$@"

echo "test.sh: samples/plain-java against the installed artifacts"
mvn -f samples/plain-java/pom.xml verify exec:java

echo "test.sh: samples/spring-boot-counter against the installed artifacts"
mvn -f samples/spring-boot-counter/pom.xml verify

newest_jdk() { # MIN: the home of the newest JDK of at least that feature version under /usr/lib/jvm, or nothing
  local home version best="" best_version=0
  for home in /usr/lib/jvm/*; do
    [ -x "$home/bin/java" ] && [ -f "$home/release" ] || continue
    version=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$home/release")
    if [ -n "$version" ] && [ "$version" -ge "$1" ] && [ "$version" -gt "$best_version" ]; then
      best=$home best_version=$version
    fi
  done
  echo "$best"
}

jdk=$(newest_jdk 21)
if [ -n "$jdk" ]; then
  echo "test.sh: virtual-thread tests on $jdk"
  touch target/vt-step-started # the reports that count are those written after this
  # surefire/failsafe goals alone: the classes of step 2, on the newer JVM; dependencies from $repo
  JAVA_HOME="$jdk" mvn surefire:test -pl distlock-testkit -Dtest='InMemory*LockClientTest,StrictQueueHandOffTest' \
    -Ddistlock.virtualThreads.required=true
  # the whole Redis contract (its waits keep state per thread: AwaitDeadlines), and each backend's virtual-thread
  # counter in every IT class that runs it
  JAVA_HOME="$jdk" mvn failsafe:integration-test failsafe:verify \
    -pl distlock-redis,distlock-jdbc,distlock-zookeeper,distlock-etcd \
    -Dit.test='RedisLockIT,*IT#counter_virtualThreads_noLostIncrements' -Ddistlock.virtualThreads.required=true
  # a method filter that matches nothing runs nothing and passes: each module must show, in a report of this step,
  # that the test passed on $jdk
  test=counter_virtualThreads_noLostIncrements
  for reports in distlock-testkit/target/surefire-reports distlock-{redis,jdbc,zookeeper,etcd}/target/failsafe-reports; do
    ran=0
    for report in $(find "$reports" -name 'TEST-*.xml' -newer target/vt-step-started); do
      if grep -q "<property name=\"java.home\" value=\"$jdk\"/>" "$report" \
        && grep -q "<testcase name=\"$test\"" "$report" \
        && ! grep -A1 "<testcase name=\"$test\"" "$report" | grep -q -E '<(skipped|failure|error)'; then
        ran=$((ran + 1))
      fi
    done
    if [ "$ran" = 0 ]; then
      echo "test.sh: no report in $reports shows $test passing on $jdk" >&2
      exit 1
    fi
    echo "test.sh: $test passed on $jdk in $ran classes of ${reports%%/*}"
  done
else
  echo "test.sh: no JDK 21+ under /usr/lib/jvm: the virtual-thread tests ran on platform threads only (JDK 17)"
fi
echo "test.sh: passed in $((SECONDS - started)) s"
