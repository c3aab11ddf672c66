/**
 * A short blocklist of catastrophic commands. It guards against accidents (a model typing
 * `rm -rf /`), not against a determined user: approvals and the workspace are the real fences.
 */

const RULES: [RegExp, string][] = [
  [
    /(^|[;&|({`]\s*|\bsudo\s+|\bxargs\s+)rm\s+(-[a-zA-Z]*\s+|--[a-z-]+\s+)*(\/|\/\*|~|~\/|~\/\*|\$HOME|\$HOME\/|\$HOME\/\*|"\$HOME")(\s|$|[;&|)])/,
    'deletes the root or home folder',
  ],
  [/--no-preserve-root/, 'uses --no-preserve-root'],
  [/(^|[;&|(]\s*|\bsudo\s+)mkfs(\.\w+)?\b/, 'formats a filesystem'],
  [/\bdd\b[^;&|]*\bof=\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk)/, 'writes over a disk device'],
  [/>\s*\/dev\/(sd|hd|vd|xvd|nvme|mmcblk)[a-z0-9]*\b/, 'writes over a disk device'],
  [/:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, 'is a fork bomb'],
  [/(^|[;&|(]\s*|\bsudo\s+)(shutdown|reboot|halt|poweroff)\b/, 'shuts the machine down'],
  [/(^|[;&|(]\s*|\bsudo\s+)(init|telinit)\s+[06]\b/, 'shuts the machine down'],
  [/\bchmod\s+(-[a-zA-Z]*R[a-zA-Z]*\s+)[0-7]*7[0-7]{2}\s+\/(\s|$)/, 'opens up permissions on /'],
  [/\bchown\s+(-[a-zA-Z]*R[a-zA-Z]*\s+)\S+\s+\/(\s|$)/, 'changes the owner of /'],
  [/\bkill\s+(-9\s+|-KILL\s+|-SIGKILL\s+)?-1\b/, 'kills every process'],
];

/** Why a command is refused, or null when it may run. */
export function blockedReason(command: string): string | null {
  const norm = command.replace(/\\\n/g, ' ');
  for (const [re, why] of RULES) {
    if (re.test(norm)) return `the command ${why}; it is on the blocklist`;
  }
  return null;
}
