/**
 * A separate process that writes through the store's repositories and exits: what another
 * `switchboard` over the same database does, with its own connection and its own memory.
 * Usage: `node --import tsx test/helpers/store-writer.ts DATABASE_URL 'JSON list of steps'`.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { databaseTarget } from '../../src/config.js';
import { openDatabase } from '../../src/store/db.js';
import { allRules, deleteRule, insertRule } from '../../src/store/repos/approvals.js';
import { archiveConversation, setConversationModel, setScratchpad } from '../../src/store/repos/conversations.js';
import { deleteMemory, saveMemory } from '../../src/store/repos/memories.js';

/** One write. */
export type WriterStep =
  | { op: 'denyTool'; tool: string }
  | { op: 'deleteRules' }
  /** `owner`: the person whose memory it is (`test:u1`), or '' for the shared memory. */
  | { op: 'remember'; owner: string; key: string; value: string }
  | { op: 'forget'; owner: string; key: string }
  | { op: 'scratchpad'; conversationId: string; text: string | null }
  | { op: 'model'; conversationId: string; model: string | null }
  | { op: 'archive'; conversationId: string };

/** Run the steps in a child process over `databaseUrl`; throws when it fails. */
export function writeInOtherProcess(databaseUrl: string, steps: WriterStep[]): void {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.resolve(import.meta.dirname, 'store-writer.ts'), databaseUrl, JSON.stringify(steps)],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  if (r.status !== 0) throw new Error(`store writer failed (${r.status}): ${r.stderr}`);
}

async function main(url: string, steps: WriterStep[]): Promise<void> {
  const db = openDatabase(databaseTarget(url));
  try {
    for (const s of steps) {
      if (s.op === 'denyTool')
        await insertRule(db, {
          tool_glob: s.tool,
          path_glob: null,
          action: 'deny',
          priority: 100,
          conversation_id: null,
          created_by: 'writer',
        });
      else if (s.op === 'deleteRules') for (const r of await allRules(db)) await deleteRule(db, r.id);
      else if (s.op === 'remember') await saveMemory(db, s.owner, s.key, s.value, 'writer');
      else if (s.op === 'forget') await deleteMemory(db, s.owner, s.key);
      else if (s.op === 'scratchpad') await setScratchpad(db, s.conversationId, s.text);
      else if (s.op === 'archive') await archiveConversation(db, s.conversationId);
      else await setConversationModel(db, s.conversationId, s.model);
    }
  } finally {
    await db.destroy();
  }
}

if (process.argv[1] === import.meta.filename) {
  await main(process.argv[2] as string, JSON.parse(process.argv[3] as string) as WriterStep[]);
}
