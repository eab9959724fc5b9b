#!/usr/bin/env python3
"""Write docs/vectors/routing.v1.json: canary and shadow buckets and routing
decisions, computed here in Python independently of autoctx's TypeScript
(test/model/routing.test.ts holds autoctx to them).
Run: python3 scripts/gen-routing-vectors.py"""
import hashlib, json, pathlib

def canonical(v):
    return json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False)

def bucket(algorithm, parts):
    text = canonical([algorithm] + parts)
    return text, int.from_bytes(hashlib.sha256(text.encode('utf-8')).digest()[:4], 'big') % 10000

CANARY, SHADOW = 'autoctx-canary-v1', 'autoctx-shadow-v1'

def requester(r):
    for kind in ('user', 'session', 'event'):
        if r.get(kind):
            return kind, r[kind]
    return None

def decide(s, r):
    base = {'algorithm': CANARY, 'scenario': s['scenario'], 'scope': s['scope']}
    def active(reason, who, b, nr):
        return dict(base, bundle_digest=s['active']['bundle_digest'], version=s['active']['version'], state='ACTIVE', reason=reason, requester=who, bucket=b, not_runnable=nr)
    if s['registry_problem'] is not None:
        return active('registry_integrity', None, None, [])
    who = requester(r)
    reason, b, nr = 'active', None, []
    for c in s['canaries']:
        if not c['runnable']:
            nr.append(c['version']); reason = 'not_runnable'; continue
        if c['tenants'] and r.get('tenant') not in c['tenants']:
            reason = 'tenant_filtered'; continue
        if c['resource_families'] and not any((r.get('resourceAddress') is not None and r['resourceAddress'].startswith(f)) or r.get('resourceId') == f for f in c['resource_families']):
            reason = 'resource_filtered'; continue
        if who is None:
            reason = 'no_requester'; continue
        if c['basis_points'] == 0:
            reason = 'outside_share'; continue
        _, b = bucket(CANARY, [s['scope'], s['scenario'], c['salt'], who[0], who[1]])
        if c['basis_points'] is None or b < c['basis_points']:
            return dict(base, bundle_digest=c['bundle_digest'], version=c['version'], state='CANARY', reason='canary', requester=who[0], bucket=b, not_runnable=nr)
        reason = 'outside_share'
    return active(reason, who[0] if who else None, b, nr)

D = lambda ch: ch * 64
buckets = []
for parts in (['global', 'demo', 'v2', 'user', 'alice'], ['global', 'demo', 'v2', 'session', 'alice'], ['global', 'demo', 'v3', 'user', 'alice'], ['eu', 'démo', 'v2', 'event', 'évènement-1'], ['global', 'demo', 'v2', 'user', 'a"b\\c']):
    text, b = bucket(CANARY, parts)
    buckets.append({'algorithm': CANARY, 'parts': parts, 'hashed_text': text, 'bucket': b})
for parts in (['global', 'demo', 'v2', 'evt-1'], ['global', 'demo', 'v2', 'evt-2']):
    text, b = bucket(SHADOW, parts)
    buckets.append({'algorithm': SHADOW, 'parts': parts, 'hashed_text': text, 'bucket': b})

def canary(version, digest, bp, tenants=(), families=(), salt=None, runnable=True):
    return {'version': version, 'bundle_digest': digest, 'basis_points': bp, 'tenants': list(tenants), 'resource_families': list(families), 'salt': salt or version.lower(), 'runnable': runnable}

def snap(canaries, problem=None):
    return {'scenario': 'demo', 'scope': 'global', 'active': {'version': 'v1', 'bundle_digest': D('a'), 'source': 'global'}, 'canaries': canaries, 'registry_problem': problem}

cases = []
half = snap([canary('v2', D('b'), 5000)])
for u in ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi']:
    cases.append((half, {'user': u}))
cases += [
    (half, {'session': 's-1'}), (half, {'event': 'e-1'}), (half, {}), (half, {'user': 'alice', 'session': 's-9', 'event': 'e-9'}),
    (snap([canary('v2', D('b'), None)]), {'user': 'anyone'}),
    (snap([canary('v2', D('b'), None)]), {}),
    (snap([canary('v2', D('b'), 0)]), {'user': 'alice'}),
    (snap([canary('v2', D('b'), 10000, tenants=['acme'])]), {'user': 'alice', 'tenant': 'acme'}),
    (snap([canary('v2', D('b'), 10000, tenants=['acme'])]), {'user': 'alice', 'tenant': 'globex'}),
    (snap([canary('v2', D('b'), 10000, tenants=['acme'])]), {'user': 'alice'}),
    (snap([canary('v2', D('b'), 10000, families=['repo:acme/'])]), {'user': 'alice', 'resourceAddress': 'repo:acme/api'}),
    (snap([canary('v2', D('b'), 10000, families=['repo:acme/'])]), {'user': 'alice', 'resourceId': 'repo:acme/'}),
    (snap([canary('v2', D('b'), 10000, families=['repo:acme/'])]), {'user': 'alice', 'resourceAddress': 'repo:globex/api'}),
    (snap([canary('v2', D('b'), 10000, runnable=False), canary('v3', D('c'), 10000)]), {'user': 'alice'}),
    (snap([canary('v2', D('b'), 10000, runnable=False)]), {'user': 'alice'}),
    (snap([canary('v3', D('c'), 5000, salt='v2')]), {'user': 'alice'}),
    (snap([canary('v2', D('b'), 10000)], problem='registry edited by hand'), {'user': 'alice'}),
]
decisions = [{'snapshot': s, 'request': r, 'decision': decide(s, r)} for s, r in cases]
out = {
    'description': 'autoctx routing (algorithm autoctx-canary-v1, shadow autoctx-shadow-v1). A bucket is the first 4 bytes of SHA-256 over the UTF-8 of the canonical JSON (sorted keys, no spaces, no ASCII escaping) of [algorithm, ...parts], read big-endian, modulo 10000. Canary parts: [scope, scenario, salt (the canary release\'s lowercased version unless it names another), requester kind (user, else session, else event), requester id]; a requester is in a share of B basis points when its bucket < B (null: the whole scope; 0: nobody; no requester: outside). Shadow parts: [scope, scenario, the SHADOW release\'s lowercased version, event id]. Canaries are taken in version order: one not runnable is passed over, then the tenant filter (a listed tenant only), the resource filter (the address starts with a family, or the id equals one), the requester, the share; the first that admits serves, else the scope\'s ACTIVE with the last reason.',
    'buckets': buckets,
    'decisions': decisions,
}
path = pathlib.Path(__file__).resolve().parent.parent / 'docs' / 'vectors' / 'routing.v1.json'
path.write_text(json.dumps(out, indent=2, ensure_ascii=False) + '\n', encoding='utf-8')
print(path, len(buckets), 'buckets,', len(decisions), 'decisions')
