#!/bin/bash
# before: distlock-core classes of 3315c3a (/tmp/stall-before/core-classes); after: the same plus the stall branch's
# change (/tmp/stall-after/core-classes). Both with /work/wt-stall's distlock-redis classes (3315c3a) first, then the
# probe classpath /tmp/aprobe/cp (relative to /work/main). Each run starts when Redis 127.0.0.1:16480 has no hold key.
cd /work/main
REST="/work/wt-stall/distlock-redis/target/classes:$(cat /tmp/aprobe/cp):/tmp/aprobe:/tmp/stall-probe"
BEFORE="/tmp/stall-before/core-classes:$REST"
AFTER="/tmp/stall-after/core-classes:$REST"
run() {
  local label=$1 cp=$2; shift 2
  while [ -n "$(redis-cli -p 16480 --scan --pattern '*:hold' | head -1)" ]; do sleep 1; done
  echo "=== $label: java -cp <$label cp> $* ; $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg)"
  timeout 60 nice -n 10 java -cp "$cp" "$@" 2>&1 | grep -v "^\s*at \|is closed\|Connection closed\|\.\.\. .* more"
}
for i in 1 2 3; do
  run before "$BEFORE" TProbe30 2
  run after "$AFTER" TProbe30 2
done
for i in 1 2; do
  run before "$BEFORE" TProbe 2 tv
  run after "$AFTER" TProbe 2 tv
  run before "$BEFORE" AProbe 2
  run after "$AFTER" AProbe 2
done
