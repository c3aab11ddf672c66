/**
 * `send_voice_message`: speak a short text through the OpenAI-compatible speech endpoint (opus)
 * and send it as a voice note. Offered only on channels with the `voice` capability; a clear error
 * when `audio.speech_enabled` is false.
 */
import { z } from 'zod';
import { errorMessage } from '../../src/errors.js';
import { defineTool } from '../../src/tools/define.js';
import type { Plugin } from '../../src/tools/plugin.js';

/** Longest text spoken (characters; the speech endpoint caps input at 4096). */
export const VOICE_MAX_CHARS = 4000;

const sendVoiceMessage = defineTool({
  name: 'send_voice_message',
  description:
    'Say a short text as a voice message in this chat (text-to-speech). Use only when the user asks for audio.',
  schema: z.object({ text: z.string().min(1).max(VOICE_MAX_CHARS).describe('What to say') }),
  meta: {
    category: 'channel',
    defaultApproval: 'allow',
    primaryKey: 'text',
    requires: ['voice'],
    source: 'plugin:voice',
  },
  describe: (a) => `send_voice_message ${a.text}`,
  async execute(args, ctx) {
    if (!ctx.config.audio.speech_enabled) {
      return {
        output: 'Voice messages are disabled on this bot (audio.speech_enabled is false). Reply in text instead.',
        status: 'failed',
      };
    }
    if (!ctx.sendFile) return { output: 'This chat cannot receive voice messages.', status: 'failed' };
    let audio: Buffer;
    try {
      audio = await ctx.speak(args.text, ctx.signal);
    } catch (err) {
      return { output: `Speech synthesis failed: ${errorMessage(err)}`, status: 'failed' };
    }
    try {
      // The audio is sent as it is (a copy of these bytes): it never touches the workspace.
      await ctx.sendFile({ bytes: audio, name: 'voice.ogg', kind: 'voice' });
    } catch (err) {
      return { output: `Sending the voice message failed: ${errorMessage(err)}`, status: 'failed' };
    }
    return { output: `Sent a voice message (${audio.length} bytes of audio).`, summary: 'voice message sent' };
  },
});

/** The voice plugin. */
export const voicePlugin: Plugin = { name: 'voice', tools: () => [sendVoiceMessage] };
