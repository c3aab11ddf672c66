/**
 * What an "always" grant covers, in the words a card and a prompt show. It reads the arguments
 * `grantArgs` (`core/rules.ts`) stores, but lives here because card content is built in
 * `src/delivery/`, below the core (docs/architecture.md, "Layers").
 */

/** Longest argument value said in a grant's words; a longer one is "the … shown". */
const WORDS_VALUE_CHARS = 60;
/** Longest list of arguments said; a longer one is "exactly the arguments shown". */
const WORDS_CHARS = 240;

/**
 * The grant's arguments in words: a lone string argument as itself (`command exactly \`ls\``),
 * else each argument (strings first), a long one as "the … shown" (the card shows it above).
 */
function argsInWords(argsKey: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argsKey) as unknown;
  } catch {
    return `exactly these arguments: ${argsKey}`; // not JSON (never written so): show it as stored
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return `exactly these arguments: ${argsKey}`;
  const entries = Object.entries(parsed as Record<string, unknown>);
  const said = (k: string, v: unknown) => {
    const text = typeof v === 'string' ? `\`${v}\`` : JSON.stringify(v);
    return text.length > WORDS_VALUE_CHARS ? `the ${k} shown` : `${k} ${text}`;
  };
  const [only] = entries;
  if (entries.length === 1 && only && typeof only[1] === 'string') {
    const [k, v] = only;
    return v.length + 2 > WORDS_VALUE_CHARS ? `exactly the ${k} shown` : `${k} exactly \`${v}\``;
  }
  const ordered = [
    ...entries.filter(([, v]) => typeof v === 'string'),
    ...entries.filter(([, v]) => typeof v !== 'string'),
  ];
  const words = ordered.map(([k, v]) => said(k, v)).join(', ');
  return words.length > WORDS_CHARS || words.length === 0 ? 'exactly the arguments shown' : `exactly ${words}`;
}

/**
 * What an "always" grant of this call would cover, in words shown on the button or prompt: the
 * tool, the path asked for file tools, else the exact arguments of `grantArgs` (`core/rules.ts`)
 * (`bash with command exactly \`ls\``); only for the user whose turn asked.
 */
export function alwaysScopeText(toolName: string, targetPath: string | null, argsKey: string | null = null): string {
  if (targetPath) return `${toolName} on ${targetPath}`;
  if (argsKey !== null) return `${toolName} with ${argsInWords(argsKey)}`;
  return `${toolName}, any arguments`;
}
