/**
 * The web surface's look-up of a post a crash left unrecorded (`findPosted`): the presenter asks
 * it before posting again a row that was being sent, so a message that landed is not shown twice.
 * Found by its exact body, in its thread, after the message shown before it; nothing else matches.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSurface, webEmitter } from '../../src/channels/web/surface.js';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { openTestDatabase } from '../helpers/test-db.js';
import { lexer } from 'marked';

let dir: string;
let db: Db;
let surface: WebSurface;
const here = { chatKey: 'alice', threadKey: 't1' };
const part = (text: string) => webEmitter.markdown(lexer(text))[0]!;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-web-find-'));
  db = openTestDatabase(dir);
  await migrateToLatest(db);
  surface = new WebSurface(db, 100);
});

afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('web findPosted', () => {
  it('finds a post by its body after the message before it, in its thread only', async () => {
    const first = await surface.post(here, part('Answer one'));
    const second = await surface.post(here, part('Answer two'));
    expect(await surface.findPosted(here, part('Answer one'), undefined)).toBe(first);
    expect(await surface.findPosted(here, part('Answer two'), first)).toBe(second);
    // Nothing with this body after it: a repeated answer is posted again, not taken for the old one.
    expect(await surface.findPosted(here, part('Answer one'), first)).toBeUndefined();
    expect(await surface.findPosted(here, part('Answer three'), undefined)).toBeUndefined();
    expect(await surface.findPosted({ ...here, threadKey: 't2' }, part('Answer two'), undefined)).toBeUndefined();
    expect(await surface.findPosted({ ...here, chatKey: 'bob' }, part('Answer two'), undefined)).toBeUndefined();
  });

  it('an edited message is found by what it shows now; a deleted one is not found', async () => {
    const ref = await surface.post(here, part('Draft'));
    await surface.edit(here, ref, part('Final text'));
    expect(await surface.findPosted(here, part('Final text'), undefined)).toBe(ref);
    expect(await surface.findPosted(here, part('Draft'), undefined)).toBeUndefined();
    await surface.delete(here, ref);
    expect(await surface.findPosted(here, part('Final text'), undefined)).toBeUndefined();
  });
});
