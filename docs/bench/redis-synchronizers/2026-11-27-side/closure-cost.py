import importlib.util, statistics, sys
spec=importlib.util.spec_from_file_location('st','/work/wt-redissem/docs/bench/redis-synchronizers/script-timing.py'); st=importlib.util.module_from_spec(spec); spec.loader.exec_module(st)
res='/work/wt-redissem/distlock-redis/src/main/resources/io/distlock/redis'
r=st.Redis(7399)
r.call('CONFIG','SET','slowlog-log-slower-than','-1')
def stat():
    for line in r.call('INFO','commandstats').split('\n'):
        if line.startswith('cmdstat_evalsha:'):
            d=dict(x.split('=') for x in line.split(':',1)[1].strip().split(','))
            return int(d['calls']), int(d['usec'])
common=open(res+'/claim-common.lua').read()
pre='local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]\n'
V={'empty':'return 0','defs x1':pre+common+'\nreturn 0','defs x2':pre+common+'\n'+common+'\nreturn 0','defs x4':pre+(common+'\n')*4+'return 0',
   '20 plain closures':'\n'.join(f'local function f{i}(a) return a end' for i in range(20))+'\nreturn 0',
   '20 closures 5 upvalues':pre+'\n'.join(f'local function f{i}(a) return meta..holds..grants..queue..deadlines end' for i in range(20))+'\nreturn 0'}
shas={k:r.call('SCRIPT','LOAD',v) for k,v in V.items()}
out={k:[] for k in V}
keys=['a','b','c','d','e']
for rnd in range(9):
    for k,sha in shas.items():
        c0,u0=stat()
        for i in range(500): r.call('EVALSHA',sha,5,*keys,'x')
        c1,u1=stat(); out[k].append((u1-u0)/(c1-c0))
for k,v in out.items(): print(f'{k}: median {statistics.median(v):.2f} min {min(v):.2f}')
