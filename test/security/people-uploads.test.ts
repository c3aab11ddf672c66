/**
 * People are kept apart: a file sent in one conversation is saved in that conversation's folder
 * and no other conversation's tools see it. Alice's model cannot read, list or search Bob's
 * upload with the file tools, nor through a symlink she plants in her own folder, nor with an
 * approved shell command in bubblewrap (`cat`, `ls -R`, `grep -r`, the symlink): the folder is
 * not there. Her own upload she reads both ways. An admin's conversation sees every upload. A
 * group thread's upload stays in that thread; a job's run sees what the chat it reports to sees.
 * A real core, the scripted model over HTTP, real files, real bubblewrap.
 */
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingFile } from '../../src/contract/chat.js';
import { pathsFor, uploadsChatOf } from '../../src/core/tool-scope.js';
import { saveUpload } from '../../src/delivery/files.js';
import { uploadFolder, visibleUploadFolders } from '../../src/delivery/upload-folders.js';
import { ensureConversation, getConversation } from '../../src/store/repos/conversations.js';
import { insertJob, JOB_CHANNEL } from '../../src/store/repos/jobs.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';

const BOB_SECRET = 'BOBSECRET-7f3a9c';
const ALICE_NOTE = 'ALICENOTE-2b8e41';

let h: Harness;
/** Workspace-relative paths of the saved uploads. */
let bobFile: string;
let aliceFile: string;

/** A file as a channel hands it to the core, saved by the shared upload code into the folder the core picks. */
function sent(name: string, text: string): IncomingFile {
  return {
    name,
    fetch: (folder) =>
      saveUpload(Readable.from([Buffer.from(text)]), { paths: h.core.paths, folder, name, maxBytes: 10_000 }),
  };
}

/** `user` sends `files` in their one-to-one chat; the model answers `ok`. Returns the saved path. */
async function upload(user: string, file: IncomingFile): Promise<string> {
  h.llm.push({ text: `ok ${user}` });
  const before = h.llm.chatRequests().length;
  await h.core.receive({
    channel: 'test',
    chatKey: `${user}-dm`,
    threadKey: '',
    userId: user,
    text: 'here is a file',
    direct: true,
    files: [file],
  });
  await waitFor(() => h.llm.chatRequests().length > before, `${user}'s turn`);
  await h.core.idle();
  const text = JSON.stringify(h.llm.chatRequests().at(-1)!.body.messages);
  return /uploads\/test\/[\w.+%-]+\/[\w.-]+/.exec(text)![0];
}

/**
 * One turn of `user` in their one-to-one chat: the model calls `name` with `args` (its approval,
 * if asked, given by the user), then answers. Returns the tool's status and the text the model got.
 */
async function tool(user: string, name: string, args: Record<string, unknown>) {
  const answer = `done ${name} ${Math.random()}`;
  h.llm.push({ toolCalls: [{ name, arguments: JSON.stringify(args) }] }, { text: answer });
  let decided = h.channel.eventsOf('approval_requested').length;
  await h.send(`please ${name}`, { userId: user, chatKey: `${user}-dm` });
  await waitFor(
    async () => {
      const cards = h.channel.eventsOf('approval_requested');
      if (cards.length > decided) {
        decided = cards.length;
        await h.core.decideApproval({ id: cards.at(-1)!.id, decision: 'approve', by: `test:${user}` });
      }
      return h.channel.eventsOf('reply').some((e) => e.text === answer);
    },
    `${user}'s ${name}`,
    30_000,
  );
  await h.core.idle();
  const row = await h.core.db
    .selectFrom('tool_calls')
    .select(['status', 'result'])
    .where('name', '=', name)
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
  return { status: row.status, text: row.result ?? '' };
}

beforeAll(async () => {
  h = await startHarness({
    overrides: {
      access: { allowed_users: ['test:alice', 'test:bob'], admins: ['test:admin'] },
      tools: { bash: { sandbox: 'auto' } },
    },
  });
  bobFile = await upload('bob', sent('secret.txt', `${BOB_SECRET}\n`));
  aliceFile = await upload('alice', sent('note.txt', `${ALICE_NOTE}\n`));
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('uploads are saved per conversation', () => {
  it("in the one-to-one chat's folder", () => {
    expect(path.dirname(bobFile)).toBe('uploads/test/bob-dm');
    expect(path.dirname(aliceFile)).toBe('uploads/test/alice-dm');
    expect(readFileSync(path.join(h.core.paths.root, bobFile), 'utf8')).toBe(`${BOB_SECRET}\n`);
  });
});

describe("Alice's file tools", () => {
  it("cannot read Bob's upload, by its path or through a symlink in her own folder", async () => {
    const direct = await tool('alice', 'read_file', { path: bobFile });
    expect(direct.status).toBe('failed');
    expect(direct.text).toContain("another conversation's upload");
    expect(direct.text).not.toContain(BOB_SECRET);
    // A link planted in her own (visible) folder, pointing at Bob's.
    const own = path.join(h.core.paths.root, 'uploads/test/alice-dm');
    symlinkSync(path.join(h.core.paths.root, bobFile), path.join(own, 'link.txt'));
    symlinkSync(path.join(h.core.paths.root, 'uploads/test/bob-dm'), path.join(own, 'bobdir'));
    for (const p of ['uploads/test/alice-dm/link.txt', 'uploads/test/alice-dm/bobdir/secret.txt']) {
      const r = await tool('alice', 'read_file', { path: p });
      expect(r.text, p).not.toContain(BOB_SECRET);
      expect(r.status, p).toBe('failed');
    }
  });

  it('cannot list or search it', async () => {
    for (const args of [{}, { path: 'uploads' }, { path: 'uploads/test' }, { path: 'uploads', max_depth: 5 }]) {
      const r = await tool('alice', 'list_files', args);
      // Her own symlinks show the target she wrote (after "->"); nothing of Bob's folder is listed.
      const listed = r.text.split('\n').map((l) => l.split(' -> ')[0]!);
      expect(
        listed.filter((l) => l.includes('bob-dm') || l.includes('secret')),
        JSON.stringify(args),
      ).toEqual([]);
      expect(r.text, JSON.stringify(args)).toContain('uploads/test/alice-dm/');
    }
    expect((await tool('alice', 'list_files', { path: 'uploads/test/bob-dm' })).status).toBe('failed');
    for (const args of [{ query: 'BOBSECRET' }, { query: 'BOBSECRET', path: 'uploads' }, { query: 'SECRET|NOTE' }]) {
      const r = await tool('alice', 'search', args);
      expect(r.text, JSON.stringify(args)).not.toContain(BOB_SECRET);
      expect(r.text, JSON.stringify(args)).not.toContain('bob-dm');
    }
    expect((await tool('alice', 'search', { query: 'x', path: 'uploads/test/bob-dm' })).status).toBe('failed');
  });

  it('read, list and search her own upload', async () => {
    expect((await tool('alice', 'read_file', { path: aliceFile })).text).toContain(ALICE_NOTE);
    expect((await tool('alice', 'list_files', { path: 'uploads', max_depth: 5 })).text).toContain('note.txt');
    expect((await tool('alice', 'search', { query: 'ALICENOTE' })).text).toContain(ALICE_NOTE);
  });

  it("cannot write into Bob's folder", async () => {
    const r = await tool('alice', 'write_file', { path: 'uploads/test/bob-dm/planted.txt', content: 'x' });
    expect(r.status).toBe('failed');
    expect(r.text).toContain("another conversation's upload");
  });
});

const noBwrap = skipReason('bwrap', "the shell's view of other conversations' uploads is bubblewrap's");

describe.skipIf(noBwrap !== undefined)(`Alice's shell in bubblewrap${skipped(noBwrap)}`, () => {
  it("does not see Bob's folder at all: cat, ls -R, grep -r and the planted symlinks find nothing", async () => {
    const command = [
      // Errors go to stdout in the shell: two pipes read side by side keep no order between them.
      `cat ${bobFile} 2>&1`,
      'echo ==ls; ls -laR uploads 2>&1',
      'echo ==grep; grep -r BOBSECRET . 2>&1',
      'echo ==links; cat uploads/test/alice-dm/link.txt 2>&1; ls uploads/test/alice-dm/bobdir/ 2>&1',
      'echo ==end',
    ].join('; ');
    const r = await tool('alice', 'bash', { command });
    expect(r.text).toContain('==end');
    expect(r.text).not.toContain(BOB_SECRET);
    const lines = r.text.split('\n');
    const section = (name: string) => {
      const from = lines.indexOf(`==${name}`);
      const to = lines.findIndex((l, i) => i > from && l.startsWith('=='));
      return lines.slice(from + 1, to).join('\n');
    };
    expect(r.text.split('==ls')[0]).toMatch(/No such file or directory/);
    expect(section('ls')).toContain('alice-dm');
    // Her own links show the targets she wrote (after "->"); no entry of Bob's folder is listed.
    const entries = section('ls')
      .split('\n')
      .map((l) => l.split(' -> ')[0]!);
    expect(entries.filter((l) => /bob-dm|secret/.test(l))).toEqual([]);
    expect(section('grep')).toBe('');
    expect(section('links')).toMatch(/No such file or directory/);
  });

  it('sees and changes her own folder', async () => {
    const r = await tool('alice', 'bash', {
      command: `cat ${aliceFile} && echo more > uploads/test/alice-dm/made-in-shell.txt && echo written`,
    });
    expect(r.text).toContain(ALICE_NOTE);
    expect(r.text).toContain('written');
    expect(readFileSync(path.join(h.core.paths.root, 'uploads/test/alice-dm/made-in-shell.txt'), 'utf8')).toBe(
      'more\n',
    );
  });

  it("an admin's shell sees every upload", async () => {
    const r = await tool('admin', 'bash', { command: `cat ${bobFile} ${aliceFile}` });
    expect(r.text).toContain(BOB_SECRET);
    expect(r.text).toContain(ALICE_NOTE);
  });
});

describe("an admin's conversation", () => {
  it("reads, lists and searches everyone's uploads", async () => {
    expect((await tool('admin', 'read_file', { path: bobFile })).text).toContain(BOB_SECRET);
    const listed = await tool('admin', 'list_files', { path: 'uploads', max_depth: 5 });
    expect(listed.text).toContain('secret.txt');
    expect(listed.text).toContain('note.txt');
    expect((await tool('admin', 'search', { query: 'BOBSECRET' })).text).toContain(BOB_SECRET);
  });
});

describe('groups, threads and jobs', () => {
  it("a group thread's upload is that thread's: the group's main conversation and others do not see it", async () => {
    const thread = { channel: 'test', chatKey: 'group-1', threadKey: 't-9' };
    const folder = uploadFolder(thread, false);
    expect(folder).toBe('uploads/test/group-1+t-9');
    expect(uploadFolder({ ...thread, threadKey: '' }, false)).toBe('uploads/test/group-1');
    // A one-to-one chat's threads share its folder.
    expect(uploadFolder({ channel: 'web', chatKey: 'alice', threadKey: 'x' }, true)).toBe('uploads/web/alice');
    mkdirSync(path.join(h.core.paths.root, folder), { recursive: true });
    const inThread = await ensureConversation(h.core.db, thread, null);
    const inGroup = await ensureConversation(h.core.db, { ...thread, threadKey: '' }, null);
    const deps = {
      db: h.core.db,
      paths: h.core.paths,
      isAdmin: (p: string) => h.core.isAdmin(p),
      isLocal: (c: string) => h.core.access.isLocal(c),
    };
    const target = `${folder}/file.txt`;
    expect((await pathsFor(deps, inThread, 'test:bob')).resolve(target, 'read').ok).toBe(true);
    expect((await pathsFor(deps, inGroup, 'test:bob')).resolve(target, 'read').ok).toBe(false);
    // The thread also sees the group's own folder (the same people are in it).
    expect((await pathsFor(deps, inThread, 'test:bob')).resolve('uploads/test/group-1/a.txt', 'read').ok).toBe(true);
    // Names never collide: a chat whose key looks like chat+thread gets a folder of its own.
    expect(visibleUploadFolders({ channel: 'test', chatKey: 'group-1+t-9' })).toEqual(['uploads/test/group-1%2Bt-9']);
    expect(uploadFolder({ channel: 'test', chatKey: '../x' }, true)).toBe('uploads/test/%2E.%2Fx');
  });

  it("a job's run sees what the chat it was created in sees, as its owner", async () => {
    const origin = await ensureConversation(h.core.db, { channel: 'test', chatKey: 'bob-dm', threadKey: '' }, null);
    await insertJob(h.core.db, {
      id: 'jobpeople',
      name: 'n',
      owner_id: 'test:bob',
      report_conversation_id: origin.id,
      prompt: 'p',
      cron: null,
      run_at: Date.now() + 3_600_000,
      timezone: 'UTC',
      next_run_at: Date.now() + 3_600_000,
    });
    const run = await ensureConversation(
      h.core.db,
      { channel: JOB_CHANNEL, chatKey: 'jobpeople', threadKey: '' },
      null,
    );
    expect(run.chat_key).toBe('jobpeople');
    expect(await uploadsChatOf(h.core.db, (await getConversation(h.core.db, run.id))!)).toEqual({
      channel: 'test',
      chatKey: 'bob-dm',
      threadKey: '',
    });
    const deps = {
      db: h.core.db,
      paths: h.core.paths,
      isAdmin: (p: string) => h.core.isAdmin(p),
      isLocal: (c: string) => h.core.access.isLocal(c),
    };
    expect((await pathsFor(deps, run, 'test:bob')).resolve(bobFile, 'read').ok).toBe(true);
    expect((await pathsFor(deps, run, 'test:bob')).resolve(aliceFile, 'read').ok).toBe(false);
  });
});
