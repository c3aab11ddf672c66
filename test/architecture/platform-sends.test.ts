/**
 * Every message a person sees goes through the presenter: a platform send (Bot API `sendMessage`
 * and friends, Slack's `chat.postMessage` / `chat.postEphemeral`, the web chat's message rows,
 * the channels' own transports) appears only in that channel's surface files, which the presenter
 * (ledger rows) and the non-persisted lane (`delivery/transient.ts`) drive. The sends and files of
 * each channel are one row of {@link CHANNEL_SENDS}.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { channelKinds } from '../../src/channels/registry.js';

const SRC = path.resolve(import.meta.dirname, '../../src');

/**
 * One row per channel that sends to a platform: the files allowed to send (its surface, and the
 * lanes of its surface in files of their own) and what a send looks like in its code. A new
 * channel adds its row here (docs/new-channel.md); a registered channel without one fails the
 * first test. Telegram's drafts (the live preview of an answer, never its message), its ephemeral
 * notices and Slack's native streams are lanes of the surface driven through it (the presenter's
 * live lane). A send of one channel's kind is allowed only in that channel's files.
 */
const CHANNEL_SENDS: Record<string, { files: string[]; sends: Array<[string, RegExp]> }> = {
  telegram: {
    files: ['surface.ts', 'drafts.ts', 'ephemeral.ts'],
    sends: [
      [
        'Bot API send',
        // (`channels.deleteMessage(` is Discord's REST client, in Discord's row.)
        /(?<!\bchannels)\.(sendMessage|sendMessageDraft|sendRichMessage|sendRichMessageDraft|sendPhoto|sendDocument|sendVoice|sendAudio|sendVideo|sendAnimation|sendMediaGroup|copyMessage|forwardMessage|editMessageText|editMessageCaption|editMessageReplyMarkup|deleteMessage|sendChatAction)\(/,
      ],
      ['grammY reply', /\bctx\.(reply|replyWithPhoto|replyWithDocument)\(/],
      ['Telegram HTML sender', /\.(sendHtml|editHtml)\(/],
    ],
  },
  slack: {
    files: ['surface.ts', 'stream.ts'],
    sends: [
      [
        'Slack Web API send',
        /\bchat\.(postMessage|postEphemeral|update|delete|scheduleMessage|startStream|appendStream|stopStream)\(|\bfilesUploadV2\(/,
      ],
      ['Slack API wrapper', /\bapi\.(post|update|ephemeral|upload|remove)\(/],
    ],
  },
  discord: {
    files: ['surface.ts'],
    sends: [
      [
        'Discord REST send',
        /\bchannels\.(createMessage|editMessage|deleteMessage|showTyping|createThread)\(|\binteractions\.(reply|followUp|editReply|updateMessage)\(/,
      ],
    ],
  },
  web: {
    files: ['surface.ts'],
    sends: [
      // Its messages are rows the pages read, announced on the bus the event streams listen to.
      ['web chat message', /(?<!function )\bwriteMessage\(/],
      ['web chat announcement', /\bbus\.emit\(['"](change|signal)['"]/],
    ],
  },
};

/** Lines of `text` that send to a platform, as `channel what: line`. */
function platformSends(text: string): Array<{ channel: string; hit: string }> {
  const found: Array<{ channel: string; hit: string }> = [];
  for (const line of text.split('\n')) {
    const code = line.trim();
    if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) continue;
    for (const [channel, row] of Object.entries(CHANNEL_SENDS))
      for (const [what, re] of row.sends) if (re.test(code)) found.push({ channel, hit: `${what}: ${code}` });
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('platform sends', () => {
  it('every registered platform channel has its row of send calls and surface files', () => {
    const platforms = channelKinds.filter((k) => !k.local).map((k) => k.name);
    expect(Object.keys(CHANNEL_SENDS).sort()).toEqual([...platforms].sort());
  });

  it('appear only in their channel’s surface files', () => {
    const outside: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const rel = path.relative(SRC, file).split(path.sep).join('/');
      for (const { channel, hit } of platformSends(readFileSync(file, 'utf8'))) {
        const allowed = CHANNEL_SENDS[channel]?.files.map((f) => `channels/${channel}/${f}`) ?? [];
        if (!allowed.includes(rel)) outside.push(`${rel}: ${hit}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('the check finds a send where it does not belong', () => {
    const sends = (line: string) => platformSends(line).map((s) => s.channel);
    expect(sends("    await deps.sender.api.sendMessage(adminId, html, { parse_mode: 'HTML' });")).toEqual([
      'telegram',
    ]);
    expect(sends('await client.chat.postEphemeral({ channel, user, text });')).toEqual(['slack']);
    expect(sends('await ctx.api.ephemeral(channel, user, text);')).toEqual(['slack']);
    expect(sends('await writeMessage(this.db, { chat_key: chatKey });')).toEqual(['web']);
    expect(sends('export async function writeMessage(db: Db, row: NewWebMessage) {')).toEqual([]);
    expect(sends(' * chat.postMessage( in a comment is no send')).toEqual([]);
    expect(sends('await this.api.channels.createMessage(id, { content });')).toEqual(['discord']);
    expect(sends('await api.interactions.followUp(app, token, body);')).toEqual(['discord']);
    expect(sends('await core.say(ref, key, content);')).toEqual([]);
  });
});
