/**
 * `config/switchboard.example.toml` and the reference in `docs/configuration.md` are generated
 * from the configuration's sections (`src/config-reference.ts`, `npm run config-docs`): they are
 * current, every key has a description to generate from, and a section's declaration (a channel's
 * own) reaches both documents.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envNameOf } from '../../src/config-keys.js';
import {
  CONFIG_DOCS_COMMAND,
  configurationReference,
  exampleToml,
  REFERENCE_END,
  REFERENCE_START,
  sectionDocs,
  withReference,
} from '../../src/config-reference.js';
import { configSection, csv, httpUrl, numericUserIds, positiveInt } from '../../src/config-section.js';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** A channel's section as a new channel would declare it. */
const chatConfig = configSection({
  name: 'chat',
  schema: z
    .object({
      bot_token: z.string().optional().describe('Setting a token enables the Chat channel.').meta({ example: '"tok"' }),
      api_root: httpUrl.default('https://chat.example').describe('API root.'),
      allowed_users: csv.default([]).describe('Chat user ids let in without pairing.'),
      limits: z
        .object({ burst: positiveInt.default(5).describe('Messages sent at once\nbefore the pacing starts.') })
        .prefault({}),
    })
    .describe('The Chat channel.'),
  env: { CHAT_BOT_TOKEN: 'bot_token', CHAT_ALLOWED_USERS: 'allowed_users' },
});

describe('generated configuration documents', () => {
  it(`config/switchboard.example.toml is what \`${CONFIG_DOCS_COMMAND}\` writes`, () => {
    expect(read('config/switchboard.example.toml') === exampleToml(), `stale: run \`${CONFIG_DOCS_COMMAND}\``).toBe(
      true,
    );
  });

  it(`docs/configuration.md's reference is what \`${CONFIG_DOCS_COMMAND}\` writes`, () => {
    const doc = read('docs/configuration.md');
    expect(doc).toContain(REFERENCE_START);
    expect(doc).toContain(REFERENCE_END);
    expect(doc === withReference(doc), `stale: run \`${CONFIG_DOCS_COMMAND}\``).toBe(true);
  });

  it('every key of every section has a description to generate from', () => {
    const undescribed: string[] = [];
    const walk = (tables: ReturnType<typeof sectionDocs>) => {
      for (const t of tables) {
        for (const k of t.keys) if (!k.meta.description?.trim()) undescribed.push(k.dotted);
        walk(t.tables);
      }
    };
    walk(sectionDocs());
    expect(undescribed).toEqual([]);
  });
});

describe('a section declaration reaches both documents', () => {
  it('the example: table, introduction, descriptions, env names, defaults, commented examples, nested tables', () => {
    const text = exampleToml([chatConfig]);
    expect(text).toContain(
      [
        '[chat]',
        '# The Chat channel.',
        `${'# Setting a token enables the Chat channel.'.padEnd(68)}env CHAT_BOT_TOKEN`,
        '# bot_token = "tok"',
        '# API root.',
        'api_root = "https://chat.example"',
        `${'# Chat user ids let in without pairing.'.padEnd(68)}env CHAT_ALLOWED_USERS`,
        'allowed_users = []',
        '',
        '[chat.limits]',
        '# Messages sent at once',
        '# before the pacing starts.',
        'burst = 5',
        '',
      ].join('\n'),
    );
    // The file is TOML whose values are the defaults.
    expect(chatConfig.schema.parse(parseToml(text).chat)).toEqual(chatConfig.schema.parse({}));
  });

  it('the reference: one row per key with its type, default and every env name; short names in their table', () => {
    const ref = configurationReference([chatConfig]);
    expect(ref.startsWith(REFERENCE_START) && ref.endsWith(REFERENCE_END)).toBe(true);
    expect(ref).toContain(
      `| \`chat.bot_token\` | string | — | \`CHAT_BOT_TOKEN\`<br>\`${envNameOf('chat.bot_token')}\` | Setting a token enables the Chat channel. |`,
    );
    expect(ref).toContain(
      '| `chat.limits.burst` | integer ≥ 1 | `5` | `SWITCHBOARD__CHAT__LIMITS__BURST` | Messages sent at once before the pacing starts. |',
    );
    expect(ref).toContain('| `CHAT_ALLOWED_USERS` | `chat.allowed_users` | `[]` |');
    expect(ref).toContain('### `[chat.limits]`');
  });

  it('replaces only the part between the markers, keeping the prose around it', () => {
    const doc = `# Title\n\nProse.\n\n${REFERENCE_START}\nold\n${REFERENCE_END}\n\nAfter.\n`;
    const out = withReference(doc, [chatConfig]);
    expect(out).toBe(`# Title\n\nProse.\n\n${configurationReference([chatConfig])}\n\nAfter.\n`);
    expect(withReference(out, [chatConfig])).toBe(out);
  });
});

describe('numeric user ids', () => {
  it('takes a list or a comma-separated string of numbers, and refuses a name naming the platform', () => {
    const ids = numericUserIds('Acme', 'ids only');
    expect(ids.parse('1, 22,333')).toEqual(['1', '22', '333']);
    expect(ids.parse([4, '5'])).toEqual(['4', '5']);
    const refused = ids.safeParse(['7', '@alice']);
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toBe('"@alice" is not a numeric Acme user id (ids only)');
    expect(numericUserIds('Acme').safeParse('bob').error?.issues[0]?.message).toBe(
      '"bob" is not a numeric Acme user id',
    );
  });
});
