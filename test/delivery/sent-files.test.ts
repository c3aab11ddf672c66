/**
 * The copies of sent files (`delivery/sent-files.ts`): taken through the confined primitive,
 * refused with words for the person when there is nothing to copy, stored in chunks and read back
 * whole, and removed by the sweep once nothing holds them — kept while their delivery is open or
 * a web chat message offers them.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SENT_FILE_GRACE_MS, snapshotBytes, snapshotWorkspaceFile, uploadOf } from '../../src/delivery/sent-files.js';
import { migrateToLatest, type Db } from '../../src/store/db.js';
import { enqueueAttachment } from '../../src/delivery/ledger.js';
import {
  addSentChunk,
  holdForDelivery,
  holdForWebMessage,
  pruneSentFiles,
  SENT_CHUNK_BYTES,
  startSentFile,
} from '../../src/store/repos/sent-files.js';
import { writeMessage } from '../../src/store/repos/web.js';
import { PathPolicy } from '../../src/tools/path-policy.js';
import { openTestDatabase } from '../helpers/test-db.js';
import { rejection } from '../helpers/sent-files.js';

let dir: string;
let db: Db;
let paths: PathPolicy;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-sent-'));
  mkdirSync(path.join(dir, 'ws'));
  db = openTestDatabase(dir, 'db');
  await migrateToLatest(db);
  paths = new PathPolicy({ root: path.join(dir, 'ws'), denyGlobs: ['.env*'] });
});
afterEach(async () => {
  await db.destroy();
  // With retries: a file of the closed database can still be going away while the folder is removed.
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

const ws = (rel: string) => path.join(dir, 'ws', rel);
const copies = async () => (await db.selectFrom('sent_files').select('id').execute()).map((r) => r.id).sort();

describe('taking the copy of a sent file', () => {
  it('copies a file of several chunks and reads it back whole, by its real name', async () => {
    const big = Buffer.alloc(SENT_CHUNK_BYTES * 2 + 123);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 251;
    writeFileSync(ws('data.bin'), big);
    symlinkSync(ws('data.bin'), ws('link.bin'));
    const copy = await snapshotWorkspaceFile(db, paths, 'link.bin');
    expect(copy).toMatchObject({ name: 'data.bin', size: big.length, abs: ws('data.bin') });
    const chunks = await db.selectFrom('sent_file_chunks').select('seq').where('file_id', '=', copy.id).execute();
    expect(chunks).toHaveLength(3);
    // The workspace changes afterwards: the copy does not.
    writeFileSync(ws('data.bin'), 'changed');
    const upload = await uploadOf(db, { snapshot: copy.id, kind: 'file', caption: 'c' });
    expect(upload).toMatchObject({ name: 'data.bin', size: big.length, caption: 'c', kind: 'file' });
    expect((await upload.bytes()).equals(big)).toBe(true);
    const streamed: Buffer[] = [];
    for await (const c of upload.chunks()) streamed.push(c);
    expect(Buffer.concat(streamed).equals(big)).toBe(true);
    const voice = await snapshotBytes(db, 'voice.ogg', Buffer.from('OggS'));
    expect((await (await uploadOf(db, { snapshot: voice.id, kind: 'voice' })).bytes()).toString()).toBe('OggS');
  });

  it('refuses what cannot be sent, with words for the person, and stores nothing', async () => {
    mkdirSync(ws('reports'));
    writeFileSync(ws('huge.zip'), '');
    truncateSync(ws('huge.zip'), 51 * 1024 * 1024);
    writeFileSync(ws('.env'), 'A=1');
    writeFileSync(path.join(dir, 'outside.txt'), 'secret');
    symlinkSync(path.join(dir, 'outside.txt'), ws('out-link.txt'));
    const refused = async (rel: string) => (await rejection(snapshotWorkspaceFile(db, paths, rel)))?.message;
    expect(await refused('gone.txt')).toBe('Cannot read gone.txt: ENOENT: no such file or directory');
    expect(await refused('reports')).toBe('reports is not a regular file');
    expect(await refused('huge.zip')).toBe(
      'huge.zip is 51 MB, over the 50 MB limit (the largest file switchboard sends)',
    );
    expect(await refused('.env')).toMatch(/^\.env: matches a deny rule/);
    expect(await refused('out-link.txt')).toMatch(/^out-link\.txt: outside the workspace/);
    expect(await copies()).toEqual([]);
    expect(await rejection(uploadOf(db, { snapshot: 'nope', kind: 'file' }))).toMatchObject({ code: 'file_missing' });
  });
});

describe('removing copies nothing holds', () => {
  const aged = async (id: string) =>
    db
      .updateTable('sent_files')
      .set({ created_at: Date.now() - SENT_FILE_GRACE_MS - 1000 })
      .where('id', '=', id)
      .execute();

  it('keeps a copy while its delivery is open or a live web message offers it; removes the rest after the grace', async () => {
    const now = Date.now();
    await db
      .insertInto('conversations')
      .values({
        id: 'c1',
        channel: 'web',
        chat_key: 'alice',
        thread_key: '',
        owner_id: null,
        model: null,
        scratchpad: null,
        archived: 0,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const take = async (name: string) => (await snapshotBytes(db, name, Buffer.from(name))).id;
    const queued = await take('queued');
    const delivered = await take('delivered');
    const offered = await take('offered');
    const withdrawn = await take('withdrawn');
    const orphan = await take('orphan');
    const fresh = await take('fresh');
    await startSentFile(db, 'cut-off', 'cut');
    await addSentChunk(db, 'cut-off', 0, Buffer.from('half'));
    for (const [id, key] of [
      [queued, 'k-queued'],
      [delivered, 'k-delivered'],
      [offered, 'k-offered'],
      [withdrawn, 'k-withdrawn'],
    ] as const) {
      await holdForDelivery(db, id, key);
      await enqueueAttachment(db, 'c1', key, { path: '/x', caption: null, kind: 'file', snapshot: id });
    }
    await db
      .updateTable('deliveries')
      .set({ status: 'delivered' })
      .where('idem_key', 'in', ['k-delivered', 'k-offered', 'k-withdrawn'])
      .execute();
    for (const [id, ref, deleted] of [
      [offered, 'ref-offered', false],
      [withdrawn, 'ref-withdrawn', true],
    ] as const) {
      await writeMessage(db, { ref, chat_key: 'alice', thread_key: '', pos: 1, body: '{}', deleted });
      await holdForWebMessage(db, id, ref);
    }
    for (const id of [queued, delivered, offered, withdrawn, orphan, 'cut-off']) await aged(id);

    expect(await pruneSentFiles(db, Date.now() - SENT_FILE_GRACE_MS)).toBe(4);
    expect(await copies()).toEqual([queued, offered, fresh].sort());
    const left = await db.selectFrom('sent_file_chunks').select('file_id').distinct().execute();
    expect(left.map((r) => r.file_id).sort()).toEqual([queued, offered, fresh].sort());
  });
});
