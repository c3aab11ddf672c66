import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { builtinTools, promptSections } from '../../src/tools/builtins/index.js';

const tools = builtinTools(
  configSchema.parse({ tools: { web_search: { backend: 'searxng', url: 'http://127.0.0.1:1' } } }),
);
const byName = new Map(tools.map((t) => [t.name, t]));

describe('builtin catalog', () => {
  it('has every contract tool (but not ask_user_clarification) with the right default approval', () => {
    const allow = [
      'read_file',
      'list_files',
      'search',
      'man',
      'math',
      'recall',
      'remember',
      'forget',
      'write_todos',
      'update_scratchpad',
      'bash_processes',
    ];
    const require = ['bash', 'write_file', 'edit_file', 'write_patch', 'web_fetch', 'web_search'];
    expect([...byName.keys()].sort()).toEqual([...allow, ...require].sort());
    for (const n of allow) expect(byName.get(n)?.meta.defaultApproval, n).toBe('allow');
    for (const n of require) expect(byName.get(n)?.meta.defaultApproval, n).toBe('require');
    expect(byName.has('ask_user_clarification')).toBe(false);
    expect(promptSections).toHaveLength(2);
  });

  it('leaves out web_search when no search backend is configured (a tool that cannot work is not offered)', () => {
    const names = builtinTools(configSchema.parse({})).map((t) => t.name);
    expect(names).not.toContain('web_search');
    expect(names).toContain('web_fetch');
  });

  it('publishes object schemas that reject unknown keys, and primary keys that exist', () => {
    for (const t of tools) {
      expect(t.parameters.type, t.name).toBe('object');
      expect(t.parameters.additionalProperties, t.name).toBe(false);
      if (t.meta.primaryKey)
        expect(Object.keys(t.parameters.properties as object), t.name).toContain(t.meta.primaryKey);
      expect(t.parse({ bogus: 1 }).ok, t.name).toBe(false);
    }
  });

  it('gives useful labels, target paths and previews', () => {
    const label = (n: string, args: unknown) => {
      const t = byName.get(n)!;
      const p = t.parse(args);
      if (!p.ok) throw new Error(p.error);
      return { label: t.describe(p.value).short, target: t.targetPath?.(p.value), preview: t.preview?.(p.value) };
    };
    expect(label('bash', { command: 'git status' }).label).toBe('bash git status');
    expect(label('edit_file', { path: 'src/a.ts', old_string: 'a', new_string: 'b' })).toMatchObject({
      label: 'edit_file src/a.ts',
      target: 'src/a.ts',
      preview: 'src/a.ts\n- a\n+ b',
    });
    expect(label('read_file', { path: 'src/a.ts' }).target).toBe('src/a.ts');
    expect(label('write_file', { path: 'x.md', content: 'hello' }).preview).toContain('x.md (5 B)\nhello');
    expect(label('web_fetch', { url: 'https://example.com' }).label).toBe('web_fetch https://example.com');
    expect(label('search', { query: 'TODO', path: 'src' }).label).toBe('search "TODO" in src');
    expect(label('bash', { command: 'x'.repeat(200) }).label.length).toBeLessThanOrEqual(60);
    // Previews are whole: a card shows what fits and sends the rest as a file, so nothing runs unseen.
    const content = `${'y'.repeat(100_000)}\ntail line`;
    expect(label('write_file', { path: 'big.txt', content }).preview).toBe(`big.txt (97.7 KB)\n${content}`);
    const command = `${'z'.repeat(10_000)}\ntouch pwned.txt`;
    expect(label('bash', { command }).preview).toBe(`workdir . · in the foreground, default timeout\n$ ${command}`);
    expect(label('bash', { command: 'ls', workdir: 'sub', background: true }).preview).toBe(
      'workdir sub · in the background\n$ ls',
    );
    expect(label('edit_file', { path: 'a.ts', old_string: 'a\nb', new_string: 'c', near_line: 9 }).preview).toBe(
      'a.ts (the occurrence nearest line 9)\n- a\n- b\n+ c',
    );
  });
});

describe('tools offered to the model', () => {
  it('web_search is not offered with backend "none", and is with a backend', async () => {
    const { startHarness, waitFor } = await import('../helpers/harness.js');
    const offered = async (overrides: Parameters<typeof startHarness>[0]) => {
      const h = await startHarness(overrides);
      try {
        await h.send('hi');
        await waitFor(() => h.events.some((e) => e.event.type === 'turn_done'), 'turn_done');
        return (h.llm.chatRequests()[0]?.body.tools ?? []).map((t: any) => t.function.name) as string[];
      } finally {
        await h.close();
      }
    };
    expect(await offered({})).not.toContain('web_search');
    expect(
      await offered({ overrides: { tools: { web_search: { backend: 'searxng', url: 'http://127.0.0.1:1' } } } }),
    ).toContain('web_search');
  });
});
