import importlib.util, statistics, sys
spec=importlib.util.spec_from_file_location('st','/work/wt-redissem/docs/bench/redis-synchronizers/script-timing.py'); st=importlib.util.module_from_spec(spec); spec.loader.exec_module(st)
r=st.Redis(int(sys.argv[3]) if len(sys.argv)>3 else 7399)
r.call('CONFIG','SET','slowlog-log-slower-than','-1'); r.call('FLUSHALL')
def stat():
    for line in r.call('INFO','commandstats').split('\n'):
        if line.startswith('cmdstat_evalsha:'):
            d=dict(x.split('=') for x in line.split(':',1)[1].strip().split(','))
            return int(d['calls']), int(d['usec'])
class Sem:
    def __init__(s, res, tag):
        s.acq=r.call('SCRIPT','LOAD',st.expand(res,'claim-acquire.lua')); s.rel=r.call('SCRIPT','LOAD',st.expand(res,'claim-release.lua'))
        s.keys=[f'd:{tag}:claim', f'd:{tag}:holds', f'd:{tag}:grants', f'd:{tag}:cq', f'd:{tag}:cd', f'd:{tag}:fence', f'd:{tag}:size', f'd:{tag}:latch', f'd:{tag}:hold']
        s.chan=f'd:{tag}:cw'; s.h=[]; s.w=[]; s.n=0
        for i in range(4): s.n+=1; o=f'c{s.n%8}:{s.n}'; s.h.append((o,s.A(o)[1]))
        for i in range(4): s.n+=1; o=f'c{s.n%8}:{s.n}'; s.A(o); s.w.append(o)
    def A(s,o): return r.call('EVALSHA',s.acq,9,*s.keys,'sem','4','s','1',o,'30000','1','30000','PUBLISH',s.chan)
    def R(s,o,t): return r.call('EVALSHA',s.rel,5,*s.keys[:5],'s'+o,str(t),'PUBLISH',s.chan)
    def step(s):
        o,t=s.h.pop(0); assert s.R(o,t)==1; w=s.w.pop(0); a=s.A(w); assert a[0]==1; s.h.append((w,a[1]))
        s.n+=1; o=f'c{s.n%8}:{s.n}'; assert s.A(o)[0]==0; s.w.append(o)
S={'A '+sys.argv[1]:Sem(sys.argv[1],'{a}'),'B '+sys.argv[2]:Sem(sys.argv[2],'{b}')}
out={k:[] for k in S}
for rnd in range(int(sys.argv[4]) if len(sys.argv)>4 else 15):
    for k,s in S.items():
        c0,u0=stat()
        for i in range(300): s.step()
        c1,u1=stat(); out[k].append((u1-u0)/(c1-c0))
for k,v in out.items(): print(f'{k}: us per script call, median of 15 rounds {statistics.median(v):.1f}, min {min(v):.1f}, rounds {" ".join("%.1f"%x for x in v)}')
