/**
 * Redaction of known secret shapes (API keys, tokens, private keys) from tool output, plus the
 * literal values of the secrets in the running configuration. Deterministic and conservative:
 * it hides what is recognisably a credential and leaves ordinary text alone.
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

/** The secret values of a configuration (tokens, keys), for literal redaction. */
export function configSecrets(config: Config): string[] {
  const values = [
    config.llm.api_key,
    config.telegram.bot_token,
    config.telegram.webhook_secret,
    config.slack.bot_token,
    config.slack.app_token,
    config.slack.signing_secret,
    config.tools.web_search.api_key,
  ];
  return values.filter((v): v is string => typeof v === 'string' && v.length >= 8);
}

/** Redact secrets from a whole text. */
export function redactSecrets(text: string, literals: string[] = []): string {
  let out = text.replace(PRIVATE_KEY, `${REDACTED} private key`);
  for (const lit of literals) out = out.split(lit).join(REDACTED);
  for (const re of PATTERNS) out = out.replace(re, REDACTED);
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
