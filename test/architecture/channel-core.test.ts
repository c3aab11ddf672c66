/**
 * The channel role: a channel is handed a `ChannelCore` (src/contract/roles.ts), not the whole
 * core, and the role stays small. Read from the sources, so a member added to the role, or a
 * channel naming the old facade, fails here with the name in the message.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const MAX_MEMBERS = 10;

/** Every `.ts` file below `dir` (relative to the repository root). */
function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

/** The member names of interface `name` declared in `file`. */
function interfaceMembers(file: string, name: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement) && statement.name.text === name) {
      // Its own members: the role may not grow by extending another interface either.
      expect(statement.heritageClauses ?? [], `${name} extends nothing`).toEqual([]);
      return statement.members.map((m) => (m.name && ts.isIdentifier(m.name) ? m.name.text : m.getText(source)));
    }
  }
  throw new Error(`no interface ${name} in ${file}`);
}

describe('the channel role', () => {
  it(`ChannelCore has at most ${MAX_MEMBERS} members, and these`, () => {
    const members = interfaceMembers('src/contract/roles.ts', 'ChannelCore');
    expect(members.length, `ChannelCore members: ${members.join(', ')}`).toBeLessThanOrEqual(MAX_MEMBERS);
    expect(members.sort()).toEqual(
      ['act', 'admin', 'chats', 'command', 'markInboundSeen', 'mayUse', 'names', 'receive', 'say', 'store'].sort(),
    );
  });

  it('is what a channel is started with', () => {
    const channel = readFileSync(path.join(root, 'src/contract/channel.ts'), 'utf8');
    expect(channel).toMatch(/\bstart\(core: ChannelCore\): Promise<void>;/);
  });

  it('no channel, nor the kit, names the facade CoreApi or the Core class', () => {
    const files = [...sources('src/channels'), ...sources('src/kit'), 'src/jobs/job-channel.ts'];
    expect(files.length).toBeGreaterThan(50);
    const naming = files.filter((f) => /\bCore(Api)?\b/.test(readFileSync(path.join(root, f), 'utf8')));
    expect(naming).toEqual([]);
  });
});
