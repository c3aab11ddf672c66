/**
 * The directory of people's display names, one for every channel: a principal (`channel:userId`)
 * is remembered with the name it last came with — an inbound message's `userName`, or the name a
 * channel passes with a tap — so that cards and action outcomes name people alike wherever they
 * are drawn. It lives in memory, bounded (least recently seen forgotten first): a name not seen
 * since this process started shows as the raw user id until the person writes or taps again.
 */

/** Most principals remembered at once. */
export const NAME_DIRECTORY_MAX = 5_000;

/** Display names of principals seen by this process. */
export class NameDirectory {
  private readonly names = new Map<string, string>();

  constructor(private readonly max = NAME_DIRECTORY_MAX) {}

  /** Remember `name` for `principal`; a blank name (or one equal to the user id) records nothing. */
  remember(principal: string, name: string | null | undefined): void {
    const display = name?.trim();
    if (!display || display === idOf(principal)) return;
    // Re-inserting keeps the Map in least-recently-seen order, so the first key is the one to drop.
    this.names.delete(principal);
    this.names.set(principal, display);
    if (this.names.size > this.max) this.names.delete(this.names.keys().next().value as string);
  }

  /** How to name `principal` in a sentence: its remembered name, else its raw user id; nobody is "someone". */
  nameOf = (principal: string | null | undefined): string => {
    if (!principal) return 'someone';
    return this.names.get(principal) ?? idOf(principal);
  };
}

/** The user id of a principal (the part after `channel:`), or the principal when it has no channel. */
function idOf(principal: string): string {
  const at = principal.indexOf(':');
  return at < 0 ? principal : principal.slice(at + 1);
}
