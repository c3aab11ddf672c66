#!/usr/bin/env node
/**
 * Writes config/switchboard.example.toml and the generated part of docs/configuration.md from the
 * configuration's sections (src/config-reference.ts). Run as `npm run config-docs` after changing
 * a key, its default, its description or its environment name; test/core/config-reference.test.ts
 * fails until both files are current.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
// The sources are TypeScript: run under tsx (the npm script does), so the docs never wait for a build.
const { exampleToml, withReference } = await import('../src/config-reference.ts');

const example = path.join(root, 'config/switchboard.example.toml');
const doc = path.join(root, 'docs/configuration.md');
writeFileSync(example, exampleToml());
writeFileSync(doc, withReference(readFileSync(doc, 'utf8')));
console.log(`wrote ${path.relative(root, example)} and ${path.relative(root, doc)}`);
