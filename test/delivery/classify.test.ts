/** Permanent, transient and "gone" platform errors, as each surface tells them apart. */
import { webApi } from '@slack/bolt';
import { GrammyError, HttpError } from 'grammy';
import { describe, expect, it } from 'vitest';
import { classifySlackError } from '../../src/channels/slack/surface.js';
import { classifyTelegramError } from '../../src/channels/telegram/surface.js';
import { SwitchboardError } from '../../src/errors.js';

function grammy(code: number, description: string, parameters: Record<string, unknown> = {}): GrammyError {
  return new GrammyError(
    `Call to 'sendMessage' failed! (${code}: ${description})`,
    { ok: false, error_code: code, description, parameters },
    'sendMessage',
    {},
  );
}

function slack(code: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`An API error occurred: ${code}`), { code, ...extra });
}

describe('classifyTelegramError', () => {
  it('blocked, kicked and missing chats are permanent', () => {
    expect(classifyTelegramError(grammy(403, 'Forbidden: bot was blocked by the user')).kind).toBe('permanent');
    expect(classifyTelegramError(grammy(400, 'Bad Request: chat not found')).kind).toBe('permanent');
  });
  it('429 is transient and carries retry_after; 5xx and network errors are transient', () => {
    expect(classifyTelegramError(grammy(429, 'Too Many Requests: retry after 7', { retry_after: 7 }))).toMatchObject({
      kind: 'transient',
      retryAfterMs: 7000,
    });
    expect(classifyTelegramError(grammy(502, 'Bad Gateway')).kind).toBe('transient');
    expect(classifyTelegramError(new HttpError('Network request failed', new Error('ECONNRESET'))).kind).toBe(
      'transient',
    );
  });
  it('a message that cannot be edited any more is gone (posted anew)', () => {
    expect(classifyTelegramError(grammy(400, 'Bad Request: message to edit not found')).kind).toBe('gone');
    expect(classifyTelegramError(grammy(400, "Bad Request: message can't be edited")).kind).toBe('gone');
  });
  it('our own refusals (a file over the limit) are permanent', () => {
    expect(classifyTelegramError(new SwitchboardError('file_too_big', 'too big')).kind).toBe('permanent');
  });
});

describe('classifySlackError', () => {
  it('channel and auth errors are permanent; a vanished message is gone', () => {
    expect(
      classifySlackError(slack(webApi.ErrorCode.PlatformError, { data: { error: 'channel_not_found' } })).kind,
    ).toBe('permanent');
    expect(classifySlackError(slack(webApi.ErrorCode.PlatformError, { data: { error: 'is_archived' } })).kind).toBe(
      'permanent',
    );
    expect(
      classifySlackError(slack(webApi.ErrorCode.PlatformError, { data: { error: 'message_not_found' } })).kind,
    ).toBe('gone');
  });
  it('rate limits honour Retry-After; transport and internal errors are transient', () => {
    expect(classifySlackError(slack(webApi.ErrorCode.RateLimitedError, { retryAfter: 30 }))).toMatchObject({
      kind: 'transient',
      retryAfterMs: 30_000,
    });
    expect(classifySlackError(slack(webApi.ErrorCode.RequestError)).kind).toBe('transient');
    expect(classifySlackError(slack(webApi.ErrorCode.PlatformError, { data: { error: 'internal_error' } })).kind).toBe(
      'transient',
    );
  });
});
