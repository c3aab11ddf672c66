/**
 * Every message a person sees goes through the presenter: a platform send (Bot API `sendMessage`
 * and friends, Slack's `chat.postMessage` / `chat.postEphemeral`, Discord's `createMessage` and interaction
 * answers, the channels' own transports)
 * appears only in a channel's surface files, which the presenter (ledger rows) and the
 * non-persisted lane (`delivery/transient.ts`) drive.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

/**
 * The surface files of each channel: the only places that may talk to the platform's send API.
 * Telegram's drafts (the live preview of an answer, never its message), its ephemeral notices and
 * Slack's native streams are lanes of the surface in files of their own, driven through the
 * surface (the presenter's live lane).
 */
const SURFACE_FILES = new Set([
  'channels/telegram/surface.ts',
  'channels/telegram/drafts.ts',
  'channels/telegram/ephemeral.ts',
  'channels/slack/surface.ts',
  'channels/slack/stream.ts',
  'channels/discord/surface.ts',
]);

const SENDS: Array<[string, RegExp]> = [
  [
    'Bot API send',
    /\.(sendMessage|sendMessageDraft|sendRichMessage|sendRichMessageDraft|sendPhoto|sendDocument|sendVoice|sendAudio|sendVideo|sendAnimation|sendMediaGroup|copyMessage|forwardMessage|editMessageText|editMessageCaption|editMessageReplyMarkup|deleteMessage|sendChatAction)\(/,
  ],
  ['grammY reply', /\bctx\.(reply|replyWithPhoto|replyWithDocument)\(/],
  [
    'Slack Web API send',
    /\bchat\.(postMessage|postEphemeral|update|delete|scheduleMessage|startStream|appendStream|stopStream)\(|\bfilesUploadV2\(/,
  ],
  ['Telegram HTML sender', /\.(sendHtml|editHtml)\(/],
  ['Slack API wrapper', /\bapi\.(post|update|ephemeral|upload|remove)\(/],
  [
    'Discord REST send',
    /\bchannels\.(createMessage|editMessage|deleteMessage|showTyping|createThread)\(|\binteractions\.(reply|followUp|editReply|updateMessage)\(/,
  ],
];

/** Lines of `text` that send to a platform, as `what: line`. */
function platformSends(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split('\n')) {
    const code = line.trim();
    if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) continue;
    for (const [what, re] of SENDS) if (re.test(code)) found.push(`${what}: ${code}`);
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
  it('appear only in the channels’ surface files', () => {
    const outside: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const rel = path.relative(SRC, file).split(path.sep).join('/');
      if (SURFACE_FILES.has(rel)) continue;
      for (const hit of platformSends(readFileSync(file, 'utf8'))) outside.push(`${rel}: ${hit}`);
    }
    expect(outside).toEqual([]);
  });

  it('the check finds a send where it does not belong', () => {
    expect(platformSends("    await deps.sender.api.sendMessage(adminId, html, { parse_mode: 'HTML' });")).toHaveLength(
      1,
    );
    expect(platformSends('await client.chat.postEphemeral({ channel, user, text });')).toHaveLength(1);
    expect(platformSends('await ctx.api.ephemeral(channel, user, text);')).toHaveLength(1);
    expect(platformSends(' * chat.postMessage( in a comment is no send')).toEqual([]);
    expect(platformSends('await this.api.channels.createMessage(id, { content });')).toHaveLength(1);
    expect(platformSends('await api.interactions.followUp(app, token, body);')).toHaveLength(1);
    expect(platformSends('await core.say(ref, key, content);')).toEqual([]);
  });
});
