import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { testTools } from '../helpers/test-tools.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness({ tools: testTools });
});
afterEach(async () => {
  await h.close();
});

const ask = (question: string, suggested?: string[]) => ({
  toolCalls: [
    { name: 'ask_user_clarification', arguments: JSON.stringify({ question, suggested_answers: suggested }) },
  ],
});
const question = (n = 1) =>
  waitFor(() => {
    const q = h.channel.eventsOf('question');
    return q.length >= n ? q[n - 1] : undefined;
  }, 'question');

describe('questions', () => {
  it('a suggested answer resolves the question and the model sees it', async () => {
    h.llm.push(ask('Which colour?', ['red', 'blue']), { text: 'blue it is' });
    await h.send('paint it');
    const q = await question();
    expect(q).toMatchObject({ question: 'Which colour?', suggestedAnswers: ['red', 'blue'] });
    const r = await h.core.answerQuestion({ id: q.id, text: 'blue', by: 'test:u1' });
    expect(r.ok).toBe(true);
    await waitFor(() => h.channel.eventsOf('turn_done').length === 1, 'turn_done');
    const tool = h.llm.chatRequests()[1]?.body.messages.find((m: any) => m.role === 'tool');
    expect(tool.content).toBe('The user answered: blue');
  });

  it('the next text message answers a pending question instead of queuing', async () => {
    h.llm.push(ask('Name?'), { text: 'hello Ada' });
    await h.send('greet me');
    await question();
    const r = await h.send('Ada');
    expect(r.status).toBe('answered_question');
    await waitFor(() => h.channel.eventsOf('turn_done').length === 1, 'turn_done');
    expect(h.llm.chatRequests()[1]?.body.messages.filter((m: any) => m.role === 'user')).toHaveLength(1);
  });

  it('someone else cannot answer; a second answer is refused; state is unchanged', async () => {
    h.llm.push(ask('Sure?', ['yes', 'no']), { text: 'ok' });
    await h.send('x');
    const q = await question();
    expect(await h.core.answerQuestion({ id: q.id, text: 'no', by: 'test:u2' })).toMatchObject({
      ok: false,
      reason: 'not_allowed',
    });
    const row = await h.core.db.selectFrom('questions').selectAll().executeTakeFirstOrThrow();
    expect(row.status).toBe('pending');
    expect(await h.core.answerQuestion({ id: 'nope', text: 'no', by: 'test:u1' })).toMatchObject({
      ok: false,
      reason: 'unknown',
    });
    expect((await h.core.answerQuestion({ id: q.id, text: 'yes', by: 'test:u1' })).ok).toBe(true);
    expect(await h.core.answerQuestion({ id: q.id, text: 'no', by: 'test:u1' })).toMatchObject({
      ok: false,
      reason: 'already_decided',
    });
  });

  it('a newer question supersedes an older one', async () => {
    h.llm.push(
      {
        toolCalls: [
          { name: 'ask_user_clarification', arguments: '{"question":"First?"}' },
          { name: 'ask_user_clarification', arguments: '{"question":"Second?"}' },
        ],
      },
      { text: 'fine' },
    );
    await h.send('x');
    const second = await question(2);
    const superseded = await waitFor(
      () => h.channel.eventsOf('question_resolved').find((e) => e.status === 'superseded'),
      'superseded',
    );
    expect(superseded.id).not.toBe(second.id);
    await h.core.answerQuestion({ id: second.id, text: 'answer two', by: 'test:u1' });
    await waitFor(() => h.channel.eventsOf('turn_done').length === 1, 'turn_done');
    const tools = h.llm
      .chatRequests()[1]
      ?.body.messages.filter((m: any) => m.role === 'tool')
      .map((m: any) => m.content);
    expect(tools[0]).toMatch(/superseded/);
    expect(tools[1]).toBe('The user answered: answer two');
  });

  it('a pending question survives a restart and is re-emitted', async () => {
    h.llm.push(ask('Still there?', ['yes']));
    await h.send('x');
    const q = await question();
    await h.restart();
    const replay = await waitFor(() => h.channel.eventsOf('question').find((e) => e.replay), 'replayed question');
    expect(replay.id).toBe(q.id);
    h.llm.push({ text: 'great' });
    await h.core.answerQuestion({ id: q.id, text: 'yes', by: 'test:u1' });
    await waitFor(() => h.channel.eventsOf('reply').length === 1, 'reply');
    expect(h.channel.eventsOf('reply')[0]?.text).toBe('great');
  });
});
