import json,math,collections,sys
d=json.load(open(sys.argv[1]))
res=collections.defaultdict(lambda: {'new':[], 'base':[], 'peer':[]})
for it in d['items']:
    n=it['name']; base=n.startswith('base_'); key=n.removeprefix('base_').removesuffix('_r2')
    ours=it['impls'].get('tlc') or it['impls'].get('ours')
    if not ours:
        ours=[v for k,v in it['impls'].items() if k in ('tlc','ours')]
    t=ours['tflops'] if ours and ours.get('status')=='ok' else None
    peer=it['impls'].get('sdpa_cudnn') or it['impls'].get('cublas') or it['impls'].get('cudnn')
    res[key]['base' if base else 'new'].append(t)
    if peer and peer.get('status')=='ok': res[key]['peer'].append(peer['tflops'])
for k,v in res.items():
    if not v['base']: continue
    gm=lambda xs: math.exp(sum(math.log(x) for x in xs)/len(xs)) if xs and all(xs) else float('nan')
    n,b,p=gm(v['new']),gm(v['base']),gm(v['peer'])
    print(f"{k:48s} new {' '.join('%.1f'%x for x in v['new']):14s} base {' '.join('%.1f'%x for x in v['base']):14s} {100*(n/b-1):+5.1f}%  peer {p:.1f} new/peer {n/p:.2f} base/peer {b/p:.2f}")
