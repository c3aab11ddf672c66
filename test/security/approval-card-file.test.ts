/**
 * The file beside a long approval card, as the presenter sends it: once per card row (a retry or
 * a later update of the card never sends it again), before the card; a transient failure holds
 * the card back (it is retried with the file), a refusal for good leaves a card without Approve.
 */
import { describe, expect, it } from 'vitest';
import { webEmitter } from '../../src/channels/web/surface.js';
import type { OutboundText } from '../../src/contract/chat.js';
import type { ApprovalContent } from '../../src/contract/content.js';
import type { FailureClass, Surface } from '../../src/contract/surface.js';
import { prepareApprovalCard } from '../../src/delivery/card-file.js';
import type { SentRef } from '../../src/delivery/render.js';
import { cutVisible, visibleText } from '../../src/delivery/visible.js';

const content = (preview: string, state: ApprovalContent['state'] = 'pending'): ApprovalContent => ({
  type: 'approval',
  id: 'abcdef0123456789',
  label: 'write_file big.txt',
  preview,
  requester: 'web:alice',
  state,
  scope: null,
  by: null,
  note: null,
});

class Failing extends Error {
  constructor(readonly cls: FailureClass) {
    super(cls.reason);
  }
}

/** A surface with the web chat's cards whose text uploads succeed or fail as scripted. */
function surface(failures: FailureClass[] = [], canUpload = true) {
  const uploads: OutboundText[] = [];
  const s = {
    emitter: webEmitter,
    classify: (err: unknown) =>
      err instanceof Failing ? err.cls : ({ kind: 'transient', reason: String(err) } as FailureClass),
    ...(canUpload
      ? {
          uploadText: async (_address: unknown, file: OutboundText) => {
            const f = failures.shift();
            if (f) throw new Failing(f);
            uploads.push(file);
            return `doc${uploads.length}`;
          },
        }
      : {}),
  } as unknown as Surface;
  return { s, uploads };
}

const LONG = 'y'.repeat(25_000);

describe('the file beside a long approval card', () => {
  it('is sent once, before the card; its reference heads the row and the card says it is there', async () => {
    const { s, uploads } = surface();
    const refs: SentRef[] = [];
    const saved: SentRef[][] = [];
    const save = async (r: SentRef[]) => {
      saved.push(r.map((x) => ({ ...x })));
      refs.splice(0, refs.length, ...r);
    };
    const first = await prepareApprovalCard(s, 'chat', content(LONG), refs, save);
    expect(uploads).toHaveLength(1);
    expect(uploads[0]!.text.endsWith(`\n${visibleText(LONG)}\n`)).toBe(true);
    expect(first.content.wholeFile).toEqual({ name: 'approval-abcdef01-arguments.txt', sent: true });
    expect(saved).toEqual([[{ ref: 'doc1', shown: 'file:sent' }]]);
    // The card posted after it, then its update after the decision: the file is not sent again.
    refs.push({ ref: 'card1', shown: 'fp' });
    const again = await prepareApprovalCard(s, 'chat', content(LONG, 'approved'), refs, save);
    expect(uploads).toHaveLength(1);
    expect(again.entry).toEqual({ ref: 'doc1', shown: 'file:sent' });
    // A short preview needs no file.
    expect(await prepareApprovalCard(s, 'chat', content('ls'), [], save)).toEqual({ content: content('ls') });
    // A card decided already sends none.
    expect((await prepareApprovalCard(s, 'chat', content(LONG, 'denied'), [], save)).entry).toBeUndefined();
    expect(uploads).toHaveLength(1);
  });

  it('a transient failure holds the card back; a refusal for good, or no files, leaves it without Approve', async () => {
    const transient = surface([{ kind: 'transient', reason: '429' }]);
    const save = async () => {};
    await expect(prepareApprovalCard(transient.s, 'chat', content(LONG), [], save)).rejects.toThrow('429');
    const refused = surface([{ kind: 'permanent', reason: 'slack: missing_scope' }]);
    const refs: SentRef[] = [];
    const ready = await prepareApprovalCard(refused.s, 'chat', content(LONG), refs, async (r) => {
      refs.splice(0, refs.length, ...r);
    });
    expect(ready.content.wholeFile).toEqual({
      name: 'approval-abcdef01-arguments.txt',
      sent: false,
      reason: 'slack: missing_scope',
    });
    expect(refs).toEqual([{ ref: '', shown: 'file:refused:slack: missing_scope' }]);
    const card = webEmitter.approval(ready.content)[0]!.body as { view: { buttons: Array<Array<{ label: string }>> } };
    expect(card.view.buttons.flat().map((b) => b.label)).toEqual(['❌ Deny']);
    // The refusal is remembered: a retry of the row does not try again and says the same.
    const retry = await prepareApprovalCard(refused.s, 'chat', content(LONG), refs, save);
    expect(retry.content.wholeFile?.sent).toBe(false);
    const none = await prepareApprovalCard(surface([], false).s, 'chat', content(LONG), [], save);
    expect(none.content.wholeFile).toMatchObject({ sent: false, reason: 'this chat takes no files' });
  });

  it('a bounded search never ends inside a mark that closes past its bound', () => {
    const text = visibleText(`abc\u202edef`);
    for (let bound = 0; bound <= text.length; bound++) {
      const { head } = cutVisible(text, () => true, bound);
      expect(text.startsWith(head) && head.length <= bound).toBe(true);
      expect(head).not.toMatch(/⟨[^⟩]*$/);
      // A bound inside the mark cuts before it.
      if (bound > 3 && bound < 3 + '⟨U+202E RLO⟩'.length) expect(head).toBe('abc');
    }
  });
});
