"""Writes test/fixtures/python-special-functions.json: inputs and outputs of
Python 3.11's math.exp, math.log, math.log1p, math.erfc and math.lgamma, as
bit patterns, for the bit-for-bit tests of src/stats/special.

Run it with glibc's FMA code paths disabled, the reference autoctx follows:
  GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA python3 scripts/gen-special-fixtures.py
"""
import json, math, random, struct, sys

def bits(v):
    return '%016x' % struct.unpack('<Q', struct.pack('<d', v))[0]

rng = random.Random(20261130)
cases = {'exp': [], 'log': [], 'log1p': [], 'erfc': [], 'lgamma': []}
N = 1500
for _ in range(N):
    x = rng.uniform(-745, 709) if rng.random() < 0.4 else rng.choice([-1, 1]) * 10 ** rng.uniform(-18, 2.5)
    cases['exp'].append(x)
    cases['log'].append(10 ** rng.uniform(-320, 308) if rng.random() < 0.4 else rng.uniform(0.9, 1.1) if rng.random() < 0.5 else rng.uniform(0, 4))
    cases['log1p'].append(rng.uniform(-0.999999, 1) if rng.random() < 0.6 else 10 ** rng.uniform(-25, 15))
    cases['erfc'].append(rng.uniform(-7, 28) if rng.random() < 0.5 else rng.uniform(-1.5, 3))
    cases['lgamma'].append(rng.uniform(1e-6, 30) if rng.random() < 0.5 else rng.randint(1, 4000) / 2 if rng.random() < 0.5 else 10 ** rng.uniform(-25, 8))
out = {'generator': 'scripts/gen-special-fixtures.py', 'python': sys.version.split()[0], 'functions': {}}
for name, xs in cases.items():
    fn = getattr(math, name)
    out['functions'][name] = [[bits(x), bits(fn(x))] for x in xs if x > 0 or name in ('exp', 'erfc', 'log1p')]
json.dump(out, sys.stdout, separators=(',', ':'))
