import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, BOB, type SlackStack, STRANGER, startSlackStack, visibleText, waitFor } from './stack.js';

describe.each(['http', 'socket'] as const)('Slack conversations (%s mode)', (mode) => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  it('streams a DM reply into one message that ends with the full text', async () => {
    stack = await startSlackStack(mode);
    stack.llm.push({ text: 'Hello **there**, this reply is streamed in small pieces.', chunkSize: 4, delayMs: 40 });
    const ev = stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'hi' });
    const res = await stack.sendEvent(ev);
    expect(res.status).toBe(200);
    const [msg] = await waitFor(() => {
      const found = stack.findBot('D1', 'Hello *there*, this reply is streamed in small pieces.');
      return found.length ? found : null;
    }, 'final reply');
    await stack.quiesce();
    expect(stack.emu.botMessages('D1')).toHaveLength(1);
    expect(msg!.thread_ts).toBeUndefined();
    // posted early with part of the text, then updated: more than one version
    expect(msg!.history.length).toBeGreaterThan(1);
    expect(visibleText(msg!.history[0]!).length).toBeLessThan(visibleText(msg!).length);
    expect(stack.llm.chatRequests()).toHaveLength(1);
  });

  it('answers an @mention in its thread and continues the thread without a new mention', async () => {
    stack = await startSlackStack(mode);
    stack.llm.push({ text: 'first answer' }, { text: 'second answer' });
    const mention = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'what is up?', mention: true });
    await stack.sendEvent(mention);
    await waitFor(() => stack.findBot('C1', 'first answer', mention.ts).length, 'first answer in thread');
    const [first] = stack.findBot('C1', 'first answer');
    expect(first!.thread_ts).toBe(mention.ts);
    // the request the model saw has the mention stripped
    const firstReq = stack.llm.chatRequests()[0]!.body;
    expect(JSON.stringify(firstReq.messages)).toContain('what is up?');
    expect(JSON.stringify(firstReq.messages)).not.toContain('<@U0BOT>');

    const reply = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'and then?', threadTs: mention.ts });
    await stack.sendEvent(reply);
    await waitFor(() => stack.findBot('C1', 'second answer', mention.ts).length, 'second answer in thread');
    expect(stack.findBot('C1', 'second answer')[0]!.thread_ts).toBe(mention.ts);

    // chatter elsewhere in the channel (no mention, not a conversation thread) is ignored
    const other = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'unrelated' });
    await stack.sendEvent(other);
    const otherThread = stack.emu.userMessage({
      channel: 'C1',
      user: ALICE,
      text: 'also unrelated',
      threadTs: other.ts,
    });
    await stack.sendEvent(otherThread);
    await stack.quiesce();
    expect(stack.llm.chatRequests()).toHaveLength(2);
  });

  it('gives a conversation started mid-thread the earlier messages of the thread', async () => {
    stack = await startSlackStack(mode);
    stack.llm.push({ text: 'caught up' });
    const parent = stack.emu.userMessage({ channel: 'C7', user: BOB, text: 'the build is red again' });
    stack.emu.userMessage({ channel: 'C7', user: ALICE, text: 'since the lockfile change?', threadTs: parent.ts });
    const mention = stack.emu.userMessage({
      channel: 'C7',
      user: ALICE,
      text: 'can you look?',
      threadTs: parent.ts,
      mention: true,
    });
    await stack.sendEvent(mention);
    await waitFor(() => stack.findBot('C7', 'caught up', parent.ts).length, 'reply in the existing thread');
    const sent = JSON.stringify(stack.llm.chatRequests()[0]!.body.messages);
    expect(sent).toContain(`<@${BOB}>: the build is red again`);
    expect(sent).toContain(`<@${ALICE}>: since the lockfile change?`);
    expect(sent).toContain('can you look?');
    const conv = await stack.core.findConversation({ channel: 'slack', chatKey: 'C7', threadKey: parent.ts });
    expect(conv).toBeDefined();
  });

  it('ignores messages from bots and from the app itself', async () => {
    stack = await startSlackStack(mode);
    await stack.sendEvent({
      type: 'message',
      channel: 'D1',
      channel_type: 'im',
      user: stack.emu.botUserId,
      text: 'me',
      ts: '1.1',
    });
    await stack.sendEvent({
      type: 'message',
      subtype: 'bot_message',
      channel: 'D1',
      channel_type: 'im',
      bot_id: 'B9',
      text: 'a bot',
      ts: '1.2',
    });
    await stack.sendEvent({
      type: 'message',
      channel: 'D1',
      channel_type: 'im',
      user: BOB,
      bot_id: 'B9',
      text: 'bot user',
      ts: '1.3',
    });
    await stack.quiesce();
    expect(stack.llm.chatRequests()).toHaveLength(0);
    expect(stack.emu.botMessages('D1')).toHaveLength(0);
  });

  it('gives an unknown user a pairing code and does not call the model', async () => {
    stack = await startSlackStack(mode);
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D9', user: STRANGER, text: 'let me in' }));
    const [msg] = await waitFor(() => {
      const m = stack.emu.botMessages('D9');
      return m.length ? m : null;
    }, 'pairing reply');
    const code = /`([A-Z2-9]{6})`/.exec(msg!.text)?.[1];
    expect(code).toBeDefined();
    expect(msg!.text).toContain(`switchboard pair approve ${code}`);
    expect(stack.llm.chatRequests()).toHaveLength(0);
    const pending = await stack.core.db.selectFrom('pairing_codes').selectAll().execute();
    expect(pending.map((p) => [p.channel, p.user_id, p.code])).toEqual([['slack', STRANGER, code]]);
  });

  it('reports health and keeps working after Slack recycles the socket', async () => {
    stack = await startSlackStack(mode);
    expect(stack.channel.health()).toBeNull();
    if (mode === 'socket') {
      const opens = () => stack.emu.calls.filter((c) => c.method === 'apps.connections.open').length;
      expect(opens()).toBe(1);
      stack.emu.refreshSockets();
      await waitFor(
        () => opens() === 2 && stack.emu.socketCount() === 1 && stack.channel.health() === null,
        'reconnected',
      );
    }
    stack.llm.push({ text: 'still here' });
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'hello?' }));
    await waitFor(() => stack.findBot('D1', 'still here').length, 'reply after reconnect');
    await stack.channel.stop();
    expect(stack.channel.health()).toContain('stopped');
  });
});
