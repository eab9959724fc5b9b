#!/usr/bin/env node
// A deterministic evaluator for the quick start: no network, no model. For each
// request it reads the bundle's files from bundle_dir and scores how many of the
// fixture's needs the context covers, plus a small noise term fixed by the
// fixture, seed and bundle, so runs repeat exactly. It answers one JSON object
// per request line, echoing request_id and attesting the fixture digest, so it
// works started once per arm and as a persistent (JSON Lines) evaluator.
import {createHash} from 'node:crypto';
import {readFileSync, readdirSync, statSync} from 'node:fs';
import path from 'node:path';
import {createInterface} from 'node:readline';

const texts = new Map();
function bundleText(dir) {
  if (!texts.has(dir)) {
    const parts = [];
    for (const kind of readdirSync(dir)) {
      const sub = path.join(dir, kind);
      if (!statSync(sub).isDirectory()) continue;
      for (const file of readdirSync(sub)) parts.push(readFileSync(path.join(sub, file), 'utf8'));
    }
    texts.set(dir, parts.join('\n').toLowerCase());
  }
  return texts.get(dir);
}

function noise(...parts) {
  const h = createHash('sha256').update(parts.join('|')).digest();
  return (h.readUInt32BE(0) / 2 ** 32 - 0.5) * 0.04;
}

function answer(request) {
  const needs = request.observation.needs;
  const text = bundleText(request.bundle_dir);
  const covered = needs.filter((n) => text.includes(n.toLowerCase())).length;
  const score = covered / needs.length + noise(request.fixture_digest, request.seed, request.bundle_digest);
  return {
    request_id: request.request_id,
    fixture_digest: request.fixture_digest,
    score: Math.round(score * 1e6) / 1e6,
    valid: true,
  };
}

const lines = createInterface({input: process.stdin});
lines.on('line', (line) => {
  if (line.trim() === '') return;
  process.stdout.write(`${JSON.stringify(answer(JSON.parse(line)))}\n`);
});
