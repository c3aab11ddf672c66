/**
 * Names of files people send, as they are saved in the workspace `uploads/` folder (every
 * channel downloads into it the same way).
 */
import path from 'node:path';

/** Longest saved name, characters (the extension included). */
const MAX_NAME = 120;

/**
 * A file name safe on every file system: no folders, no leading dots, only word characters,
 * dots and dashes; at most 120 characters with the extension kept (a long name loses the end of
 * its stem, not its `.pdf`).
 */
export function safeFileName(name: string): string {
  const base = path.basename(name.replace(/\\/g, '/')).replace(/[^\w.-]+/g, '_').replace(/^\.+/, '') || 'file';
  if (base.length <= MAX_NAME) return base;
  const ext = path.extname(base);
  const keep = ext.length > 0 && ext.length <= 16 ? ext : '';
  return `${base.slice(0, MAX_NAME - keep.length)}${keep}`;
}
