/**
 * Redaction of known secret shapes (API keys, tokens, private keys) from tool output, plus the
 * literal values of the secrets in the running configuration and environment. Deterministic and
 * conservative: it hides what is recognisably a credential and leaves ordinary text alone. It
 * matches text as it is: an encoded secret (base64, hex) is not found — keeping secrets out of a
 * command's reach is the shell sandbox's job (`sandbox.ts`).
 */
import type { Config } from '../config.js';

/** Replacement text. */
export const REDACTED = '[REDACTED]';

const PATTERNS: RegExp[] = [
  /\bsk-(?:proj-|ant-|live-)?[A-Za-z0-9_-]{20,}/g, // OpenAI / Anthropic style
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{22,}/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g, // GitLab
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack bot/user tokens
  /\bxapp-[A-Za-z0-9-]{10,}/g, // Slack app tokens
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key id
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API key
  /\b\d{6,12}:AA[A-Za-z0-9_-]{30,}/g, // Telegram bot token
  /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/g, // Stripe
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWT
  /\btvly-[A-Za-z0-9_-]{16,}/g, // Tavily
];

/** `Authorization: Bearer x`, `aws_secret_access_key = x`, `password=x` style assignments keep the name. */
const ASSIGNMENTS: RegExp[] = [
  /\b(Bearer\s+)[A-Za-z0-9._~+/-]{16,}=*/gi,
  /\b(aws_secret_access_key\s*[=:]\s*["']?)[A-Za-z0-9/+=]{20,}/gi,
  /\b((?:api[_-]?key|secret|token|password|passwd)\s*[=:]\s*["']?)[^\s"']{12,}/gi,
];

const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;

/** Names of keys and environment variables that hold credentials. */
export const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|_KEY$)/i;

/** Shortest value taken as a secret: shorter ones would redact ordinary words. */
const MIN_SECRET = 8;

/** A value that looks like a token: long, letters and digits mixed, no spaces. */
function tokenLike(v: string): boolean {
  return v.length >= 16 && !/\s/.test(v) && /[A-Za-z]/.test(v) && /\d/.test(v);
}

/** Every string under a key named like a credential (`api_key`, `bot_token`, …), anywhere in `node`. */
function namedSecrets(node: unknown, out: string[]): void {
  if (Array.isArray(node)) for (const v of node) namedSecrets(v, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (typeof v === 'string' && SECRET_NAME.test(k)) out.push(v);
      else namedSecrets(v, out);
    }
  }
}

/** The password of a URL (`postgres://user:PASSWORD@host/db`), decoded and as written. */
function urlPassword(url: string): string[] {
  try {
    const pw = new URL(url).password;
    return pw ? [pw, decodeURIComponent(pw)] : [];
  } catch {
    return [];
  }
}

const cache = new WeakMap<Config, string[]>();

/**
 * The secret values of a configuration, for literal redaction: every key named like a credential
 * (LLM, Telegram, Slack, web search, `http.api_token`, …), the password in `store.database_url`,
 * the values of MCP servers' `headers` (and the token after `Bearer`) and the `env` values named
 * like a credential or shaped like a token, and switchboard's own environment variables named
 * like a credential. Longest first, so a value containing another is replaced whole.
 */
export function configSecrets(config: Config, env: NodeJS.ProcessEnv = process.env): string[] {
  const known = env === process.env ? cache.get(config) : undefined;
  if (known) return known;
  const values: string[] = [];
  namedSecrets(config, values);
  values.push(...urlPassword(config.store.database_url));
  for (const server of Object.values(config.mcp.servers)) {
    for (const v of Object.values(server.headers)) values.push(v, ...v.split(/\s+/).slice(1));
    for (const [k, v] of Object.entries(server.env)) if (SECRET_NAME.test(k) || tokenLike(v)) values.push(v);
    if (server.url) values.push(...urlPassword(server.url));
  }
  for (const [k, v] of Object.entries(env)) if (v && SECRET_NAME.test(k)) values.push(v);
  const out = [...new Set(values.filter((v) => v.length >= MIN_SECRET))].sort((x, y) => y.length - x.length);
  if (env === process.env) cache.set(config, out);
  return out;
}

/**
 * Redact secrets from a whole text: private keys, the literal `literals`, known key shapes and
 * (unless `assignments` is false) `password=…`-style assignments — the last is for command
 * output; in files it would also hide ordinary code such as `token = config.token`.
 */
export function redactSecrets(text: string, literals: string[] = [], options: { assignments?: boolean } = {}): string {
  let out = text.replace(PRIVATE_KEY, `${REDACTED} private key`);
  for (const lit of literals) if (out.includes(lit)) out = out.split(lit).join(REDACTED);
  for (const re of PATTERNS) out = out.replace(re, REDACTED);
  if (options.assignments !== false)
    for (const re of ASSIGNMENTS) out = out.replace(re, (_m, keep: string) => `${keep}${REDACTED}`);
  return out;
}

/** Line-by-line redaction for streamed output; remembers when it is inside a private key block. */
export class LineRedactor {
  private inKey = false;
  constructor(private readonly literals: string[] = []) {}

  /** Redact one line (without its newline); null for a line swallowed inside a private key block. */
  line(text: string): string | null {
    if (this.inKey) {
      if (/-----END [A-Z0-9 ]*PRIVATE KEY-----/.test(text)) this.inKey = false;
      return null;
    }
    if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(text)) {
      this.inKey = !/-----END [A-Z0-9 ]*PRIVATE KEY-----/.test(text);
      return `${REDACTED} private key`;
    }
    return redactSecrets(text, this.literals);
  }
}
