import importlib.util, statistics, sys
spec=importlib.util.spec_from_file_location('st','/work/wt-redissem/docs/bench/redis-synchronizers/script-timing.py'); st=importlib.util.module_from_spec(spec); spec.loader.exec_module(st)
res=sys.argv[1]
r=st.Redis(7399)
r.call('CONFIG','SET','slowlog-log-slower-than','-1')
r.call('FLUSHALL')
def stat():
    for line in r.call('INFO','commandstats').split('\n'):
        if line.startswith('cmdstat_evalsha:'):
            d=dict(x.split('=') for x in line.split(':',1)[1].strip().split(','))
            return int(d['usec'])
    return 0
acq=r.call('SCRIPT','LOAD',st.expand(res,'claim-acquire.lua')); rel=r.call('SCRIPT','LOAD',st.expand(res,'claim-release.lua'))
tag='{s}'
keys=[f'd:{tag}:claim', f'd:{tag}:holds', f'd:{tag}:grants', f'd:{tag}:cq', f'd:{tag}:cd', f'd:{tag}:fence', f'd:{tag}:size', f'd:{tag}:latch', f'd:{tag}:hold']
chan=f'd:{tag}:cw'
T={}
def timed(label, *args):
    u0=stat(); x=r.call(*args); T.setdefault(label,[]).append(stat()-u0); return x
def A(o,label='warm'): return timed(label,'EVALSHA',acq,9,*keys,'sem','4','s','1',o,'30000','1','30000','PUBLISH',chan)
def R(o,t,label): return timed(label,'EVALSHA',rel,5,*keys[:5],'s'+o,str(t),'PUBLISH',chan)
holders=[];waiting=[];n=0
for i in range(4): n+=1; o=f'c{n%8}:{n}'; holders.append((o,A(o)[1]))
for i in range(4): n+=1; o=f'c{n%8}:{n}'; A(o); waiting.append(o)
for i in range(3000):
    o,t=holders.pop(0); R(o,t,'release (4 queued)'); w=waiting.pop(0); a=A(w,'acquire head granted'); assert a[0]==1; holders.append((w,a[1]))
    n+=1; o=f'c{n%8}:{n}'; assert A(o,'acquire busy, joins queue')[0]==0; waiting.append(o)
    A(waiting[1],'acquire busy, already queued')
r.call('FLUSHALL')
for i in range(3000):
    o=f'c1:{i}'; a=A(o,'acquire nobody queued'); R(o,a[1],'release nobody queued')
T.pop('warm')
for k,v in T.items(): print(f'{k}: median {statistics.median(v)} mean {statistics.mean(v):.1f}')
