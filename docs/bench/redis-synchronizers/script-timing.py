#!/usr/bin/env python3
"""Times distlock's claim scripts and the bench reference's semaphore scripts one call at a time.

Runs against a private redis-server (default 127.0.0.1:7399, nobody else's traffic), one client, one call at a time,
and reads each call's duration from SLOWLOG (threshold 0 us), so a figure is Redis's own time for that one call,
nested commands included. The semaphore (4 permits) is driven through the steady state of the `redis-sync` bench: 4
holders and 4 queued waiters; each step releases the oldest hold, the queue's head acquires (granted) and a new
waiter arrives (refused, queued). A second pass times the same calls with nobody queued (acquire + release of one
owner), and a third the fixed costs: an empty script with the same keys and arguments, and one that only defines
claim-common.lua's functions.

    python3 script-timing.py RESOURCE_DIR [--port 7399] [--steps 2000]
"""
import socket
import statistics
import sys
import time


class Redis:
    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port))
        self.f = self.s.makefile('rb')

    def call(self, *args):
        out = [b'*%d\r\n' % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b'$%d\r\n%s\r\n' % (len(a), a))
        self.s.sendall(b''.join(out))
        return self.read()

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t == b'+':
            return rest.decode()
        if t == b'-':
            raise RuntimeError(rest.decode())
        if t == b':':
            return int(rest)
        if t == b'$':
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data.decode(errors='replace')
        if t == b'*':
            n = int(rest)
            if n < 0:
                return None
            return [self.read() for _ in range(n)]
        raise RuntimeError('bad reply %r' % line)


def expand(res, name):
    out = []
    for line in open(f'{res}/{name}').read().split('\n'):
        if line.startswith('-- #include '):
            out.append(open(f'{res}/{line[len("-- #include "):].strip()}').read())
        else:
            out.append(line + '\n')
    return ''.join(out)[:-1]


NOW = ("local t = redis.call('TIME')\n"
       "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n")
REF_ACQUIRE = NOW + """redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return redis.call('INCR', KEYS[3])
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return -math.max(1, tonumber(first[2]) - now)
"""
REF_RELEASE = NOW + """local e = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not e then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
if tonumber(e) <= now then return 0 end
if redis.call('ZCOUNT', KEYS[2], now, '+inf') > 0 then redis.call('PUBLISH', KEYS[3], '1') end
return 1
"""


class Timed:
    """Runs calls and labels them; SLOWLOG gives each call's duration."""

    def __init__(self, r):
        self.r = r
        self.labels = []

    def reset(self):
        self.r.call('SLOWLOG', 'RESET')
        self.labels = []

    def ev(self, label, sha, keys, args):
        reply = self.r.call('EVALSHA', sha, len(keys), *keys, *args)
        self.labels.append(label)
        return reply

    def collect(self):
        # Redis 7.0 logs the commands a script runs too, each before the script's own entry.
        entries = self.r.call('SLOWLOG', 'GET', -1)
        evs, nested = [], []
        for e in reversed(entries):
            name = e[3][0].upper()
            if name == 'EVALSHA':
                evs.append((e[2], nested))
                nested = []
            elif name not in ('SLOWLOG', 'CONFIG'):
                nested.append((name, e[2]))
        assert len(evs) == len(self.labels), (len(evs), len(self.labels))
        by = {}
        for label, (us, inner) in zip(self.labels, evs):
            by.setdefault(label, []).append(us)
            NESTED.setdefault(label, []).append(inner)
        return by


NESTED = {}


def summary(by):
    rows = []
    for label, us in by.items():
        rows.append((label, len(us), statistics.median(us), statistics.mean(us), sorted(us)[int(len(us) * 0.9)]))
    return rows


def main():
    res = sys.argv[1]
    port = int(sys.argv[sys.argv.index('--port') + 1]) if '--port' in sys.argv else 7399
    steps = int(sys.argv[sys.argv.index('--steps') + 1]) if '--steps' in sys.argv else 2000
    r = Redis(port)
    r.call('FLUSHALL')
    r.call('SCRIPT', 'FLUSH')
    r.call('CONFIG', 'SET', 'slowlog-log-slower-than', '0')
    r.call('CONFIG', 'SET', 'slowlog-max-len', str(steps * 60 + 1000))
    acq_src, rel_src = expand(res, 'claim-acquire.lua'), expand(res, 'claim-release.lua')
    common = open(f'{res}/claim-common.lua').read()
    acq = r.call('SCRIPT', 'LOAD', acq_src)
    rel = r.call('SCRIPT', 'LOAD', rel_src)
    ref_acq = r.call('SCRIPT', 'LOAD', REF_ACQUIRE)
    ref_rel = r.call('SCRIPT', 'LOAD', REF_RELEASE)
    empty = r.call('SCRIPT', 'LOAD', 'return 0')
    defs = r.call('SCRIPT', 'LOAD', 'local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], '
                  'KEYS[4], KEYS[5]\n' + common + '\nreturn 0')
    print(f'# script sizes (bytes): claim-acquire {len(acq_src)}, claim-release {len(rel_src)}, '
          f'reference acquire {len(REF_ACQUIRE)}, reference release {len(REF_RELEASE)}')
    t = Timed(r)

    tag = '{s}'
    keys = [f'd:{tag}:claim', f'd:{tag}:holds', f'd:{tag}:grants', f'd:{tag}:cq', f'd:{tag}:cd', f'd:{tag}:fence',
            f'd:{tag}:size', f'd:{tag}:latch', f'd:{tag}:hold']
    rkeys = keys[:5]
    chan = f'd:{tag}:cw'
    lease, wt = '30000', '30000'

    def d_acq(label, owner, queued='1'):
        return t.ev(label, acq, keys, ['sem', '4', 's', '1', owner, lease, queued, wt, 'PUBLISH', chan])

    def d_rel(label, owner, token):
        return t.ev(label, rel, rkeys, ['s' + owner, str(token), 'PUBLISH', chan])

    # distlock, steady state of the bench: 4 holders, 4 waiters
    holders, waiting, n = [], [], 0
    for _ in range(4):
        n += 1
        o = f'c{n % 8}:{n}'
        holders.append((o, d_acq('warm', o)[1]))
    for _ in range(4):
        n += 1
        o = f'c{n % 8}:{n}'
        assert d_acq('warm', o)[0] == 0
        waiting.append(o)
    t.reset()
    for _ in range(steps):
        o, tok = holders.pop(0)
        assert d_rel('release (4 queued)', o, tok) == 1
        w = waiting.pop(0)
        a = d_acq('acquire, queue head (granted)', w)
        assert a[0] == 1, a
        holders.append((w, a[1]))
        n += 1
        o = f'c{n % 8}:{n}'
        assert d_acq('acquire, busy (joins queue)', o)[0] == 0
        waiting.append(o)
    by = t.collect()
    # a woken waiter that is not the head: refused, already queued (refreshes its deadline)
    t.reset()
    for _ in range(steps):
        d_acq('acquire, busy (already queued)', waiting[1])
    by.update(t.collect())
    r.call('FLUSHALL')

    # distlock, nobody queued
    t.reset()
    for i in range(steps):
        o = f'c1:{i}'
        a = d_acq('acquire, nobody queued (granted)', o)
        assert a[0] == 1
        assert d_rel('release, nobody queued', o, a[1]) == 1
    by.update(t.collect())
    r.call('FLUSHALL')

    # the reference
    rk_acq = [f'r:{tag}:sh', f'r:{tag}:sw', f'r:{tag}:f']
    rk_rel = [f'r:{tag}:sh', f'r:{tag}:sw', f'r:{tag}:sc']
    t.reset()
    for i in range(4):
        t.ev('warm', ref_acq, rk_acq, ['4', f'h{i}', lease, 'c0', '300'])
    held = [f'h{i}' for i in range(4)]
    for i in range(steps):
        o = held.pop(0)
        t.ev('ref release (waiters)', ref_rel, rk_rel, [o])
        w = f'w{i}'
        assert t.ev('ref acquire (granted)', ref_acq, rk_acq, ['4', w, lease, 'c1', '300']) > 0
        held.append(w)
        assert t.ev('ref acquire (busy)', ref_acq, rk_acq, ['4', 'x', lease, 'c2', '300']) < 0
    b = t.collect()
    b.pop('warm')
    by.update(b)

    # fixed costs
    timeonly = r.call('SCRIPT', 'LOAD', "redis.call('TIME') return 0")
    t.reset()
    for i in range(steps):
        t.ev('empty script, 9 keys 10 args', empty, keys, ['sem', '4', 's', '1', 'c1:1', lease, '1', wt, 'PUBLISH',
                                                           chan])
        t.ev('claim-common.lua definitions only', defs, rkeys, ['x'])
        t.ev('TIME only', timeonly, [], [])
    by.update(t.collect())
    by.pop('warm', None)

    print('| call | n | median µs | mean µs | p90 µs | commands / call | µs in commands / call (mean) |')
    print('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
    for label, cnt, med, mean, p90 in summary(by):
        inner = NESTED.get(label, [])
        ncmd = statistics.mean(len(x) for x in inner) if inner else 0
        ucmd = statistics.mean(sum(u for _, u in x) for x in inner) if inner else 0
        print(f'| {label} | {cnt} | {med:.1f} | {mean:.1f} | {p90} | {ncmd:.1f} | {ucmd:.1f} |')
    print()
    print('Commands inside each call (mean count per call, mean µs per command):')
    print()
    for label, inner in NESTED.items():
        if label == 'warm' or not inner:
            continue
        counts, times = {}, {}
        for x in inner:
            for name, u in x:
                counts[name] = counts.get(name, 0) + 1
                times[name] = times.get(name, 0) + u
        parts = ', '.join(f'{k} {counts[k] / len(inner):.2f} × {times[k] / counts[k]:.1f}'
                          for k in sorted(counts, key=lambda k: -counts[k]))
        print(f'- {label}: {parts}')
    r.call('CONFIG', 'SET', 'slowlog-log-slower-than', '10000')


if __name__ == '__main__':
    main()
