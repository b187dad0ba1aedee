#!/usr/bin/env python3
"""Necessary conditions of a linearizable ordered-map history with snapshots,
checked directly on a recorded JSON-lines trace (traces/FORMAT.md, "Ordered
maps"), with unique values per key:

  future   a read at a snapshot returns a value whose write began after the
           snapshot returned;
  stale    a read at a snapshot returns a value that a later write of the key
           had replaced (that write began after it returned and returned
           before the snapshot began);
  missing  a read at a snapshot lacks a key whose first write returned before
           the snapshot began (the example never erases);
  cross    a range's pairs cannot hold at one point: a value it returns was
           replaced by a write that returned before the latest write the
           range shows had begun.

Each is a violation wherever it shows; none showing is not a verdict (gfsl
check decides). usage: scan.py TRACE.jsonl ...
"""
import json, sys, collections
def load(p):
    recs=[]
    with open(p) as f:
        meta=json.loads(f.readline())
        for i,l in enumerate(f):
            recs.append(json.loads(l))
    return meta, recs
def analyze(p):
    meta, recs = load(p)
    writes = {}  # (key,value) -> rec
    by_key = collections.defaultdict(list)
    snaps = {}
    for i,r in enumerate(recs):
        r['i']=i
        if r['op']=='upsert':
            writes[(r['key'],r['value'])]=r; by_key[r['key']].append(r)
        if r['op']=='snapshot': snaps[r['handle']]=r
    future=stale=missing=0; examples=[]
    for r in recs:
        if r['op']!='range' and not (r['op']=='contains' and 'handle' in r): continue
        s = snaps[r['handle']]
        if r['op']=='range':
            seen = {k:v for k,v in r['pairs']}; keys=range(r['lo'], r['hi'])
        else:
            seen = {r['key']:r['value']} if r['ok'] else {}; keys=[r['key']]
        for k in keys:
            if k not in by_key: continue
            if k in seen:
                w = writes.get((k, seen[k]))
                if w is None: examples.append(('never written', r, k)); continue
                if w['call'] > s['ret']:
                    future+=1; examples.append(('future', r, k, w, s))
                # overwritten before the snapshot began: some write w2 with w.ret < w2.call and w2.ret < s.call
                for w2 in by_key[k]:
                    if w2 is not w and w2['call'] > w['ret'] and w2['ret'] < s['call']:
                        stale+=1; examples.append(('stale', r, k, w, s, w2)); break
            else:
                # some write of k returned before the snapshot was called: k must be present
                if any(w['ret'] < s['call'] for w in by_key[k]):
                    missing+=1; examples.append(('missing', r, k, s))
    print(p, 'records', len(recs), 'snapshots', len(snaps), 'future', future, 'stale', stale, 'missing', missing)
    for e in examples[:3]:
        print('  ', e[0], 'key', e[2], 'read', {x:e[1][x] for x in ('i','team','op','handle','call','ret')}, 'snapshot', {x:e[-1 if e[0]=='missing' else 4][x] for x in ('i','team','call','ret')} if len(e)>3 else '', 'write', {x:e[3][x] for x in ('i','team','value','call','ret')} if e[0] in ('future','stale') else '')
for p in sys.argv[1:]: analyze(p)

def cross(p):
    meta, recs = load(p)
    writes = {}; by_key = collections.defaultdict(list)
    for i,r in enumerate(recs):
        r['i']=i
        if r['op']=='upsert': writes[(r['key'],r['value'])]=r; by_key[r['key']].append(r)
    # earliest point the snapshot can be: max over seen writes of their call; a seen value v2 of k2 is stale if
    # some write of k2, starting after v2's write returned, returned before that point
    bad=0; ex=None
    for r in recs:
        if r['op']!='range': continue
        seen=[(k,v,writes[(k,v)]) for k,v in r['pairs']]
        if not seen: continue
        lower = max(w['call'] for _,_,w in seen)
        for k,v,w in seen:
            for w2 in by_key[k]:
                if w2['call'] > w['ret'] and w2['ret'] < lower:
                    bad+=1
                    if ex is None: ex=(r['i'], k, v, w['i'], w2['i'], lower)
                    break
        # absent keys in range: a write of an absent key that returned before lower
        ks={k for k,_ in r['pairs']}
        for k in range(r['lo'], r['hi']):
            if k in by_key and k not in ks and any(w['ret'] < lower for w in by_key[k]):
                bad+=1
    print(p, 'cross-key stale', bad, ex)
for p in sys.argv[1:]: cross(p)
