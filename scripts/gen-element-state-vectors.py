#!/usr/bin/env python3
"""Write docs/vectors/element-states.v1.json: element-state digests computed
here, in Python, independently of autoctx's TypeScript (test/model/element-state.test.ts
holds autoctx to them). Run: python3 scripts/gen-element-state-vectors.py"""
import hashlib, json, pathlib

def canonical(v):
    return json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False, allow_nan=False)

def sha(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()

MARKER = 'autoctx:element-state:v1:'

def component(kind, key, media_type, state=None, content=''):
    if state is None:
        hashed = {'content': content, 'key': key, 'kind': kind, 'media_type': media_type}
    else:
        hashed = {'content': '', 'key': key, 'kind': kind, 'media_type': media_type, 'state_marker': MARKER + state}
    c = {'kind': kind, 'key': key, 'content': content if state is None else '', 'media_type': media_type, 'digest': sha(canonical(hashed))}
    if state is not None:
        c['state'] = state
    return {'hashed_text': canonical(hashed), 'component': c}

components = [
    component('playbook', 'playbook', 'text/markdown', content='# Playbook\n\nCheck inputs first.\n'),
    component('hints', 'hints', 'text/markdown', 'ABSENT'),
    component('hints', 'hints', 'text/markdown', 'UNVERSIONED'),
    component('hints', 'hints', 'text/markdown', 'INCLUDED'),
    component('prompt_fragment', 'dictionary', 'text/plain', 'ABSENT'),
    component('tool_guidance', 'café', 'application/json', 'INCLUDED'),
    component('hints', 'hints', 'text/markdown', content='autoctx:element-state:v1:ABSENT'),
]

def bundle(scenario, epoch, parent, comps):
    comps = sorted(comps, key=lambda c: (c['kind'].encode('utf-16-be'), c['key'].encode('utf-16-be')))
    body = {'schema_version': 1, 'scenario': scenario, 'evaluator_epoch': epoch, 'parent_digest': parent, 'components': comps}
    return {'hashed_text': canonical(body), 'manifest': dict(body, digest=sha(canonical(body)))}

b = bundle('demo', 'epoch-1', None, [components[0]['component'], components[1]['component'], components[4]['component']])
out = {
    'description': 'autoctx element states (an autoctx extension of the reference context bundle). A present component is written with no "state" field and hashed as the reference hashes it: SHA-256 of the canonical JSON (sorted keys, no spaces, UTF-8) of {content, key, kind, media_type}. A non-present one (ABSENT, UNVERSIONED, INCLUDED) has empty content, a "state" field, and is hashed over {content: "", key, kind, media_type, state_marker: "autoctx:element-state:v1:<STATE>"}. The manifest digest is the reference one: SHA-256 of the canonical JSON of the manifest without "digest"; a non-present component keeps its "state" key there.',
    'marker_prefix': MARKER,
    'components': components,
    'bundles': [b],
}
path = pathlib.Path(__file__).resolve().parent.parent / 'docs' / 'vectors' / 'element-states.v1.json'
path.write_text(json.dumps(out, indent=2, ensure_ascii=False) + '\n', encoding='utf-8')
print(path)
