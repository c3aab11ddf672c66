/**
 * The kernel primitives the confined file access is built on. Node has no `openat`, but Linux
 * resolves `/proc/self/fd/<fd>/<name>` from the directory the descriptor holds, wherever that
 * directory is now and whatever its path names meanwhile: opening one name at a time with
 * `O_NOFOLLOW` is then `openat(fd, name, O_NOFOLLOW)`, and a symlink swapped in fails the open
 * (ELOOP or ENOTDIR) instead of being followed. `readlink /proc/self/fd/<fd>` says where an
 * opened descriptor really is.
 */
import { constants, existsSync, promises as fs } from 'node:fs';

/** open(2) flags used here. */
export const FLAGS = {
  /** One directory of a walk: no symlink followed. */
  dir: constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
  /**
   * The last name of a walk, for reading: no symlink followed, and no wait on a FIFO (a FIFO
   * swapped in would otherwise hold the open forever); the caller checks what it opened.
   */
  read: constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  /** A new file: created here or refused, never through a symlink. */
  create: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
} as const;

/** The path that names `name` inside the directory `dirFd` holds (or the descriptor itself). */
export function fdPath(dirFd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${dirFd}` : `/proc/self/fd/${dirFd}/${name}`;
}

/** An errno-style error, like the ones `fs` throws. */
export function errnoError(code: string, message: string): NodeJS.ErrnoException {
  const err = new Error(`${code}: ${message}`) as NodeJS.ErrnoException;
  err.code = code;
  return err;
}

/**
 * Where an opened descriptor is now, as an absolute path. A file deleted since it was opened
 * has no path any more: ENOENT.
 */
export async function realPathOf(fd: number): Promise<string> {
  const target = await fs.readlink(fdPath(fd));
  if (!target.startsWith('/') || target.endsWith(' (deleted)')) throw errnoError('ENOENT', 'the file was removed');
  return target;
}

/**
 * The text of the symlink `name` in the directory `dirFd` holds, or null when `name` is not a
 * symlink. readlink never follows the name it is given, so this reads the link itself.
 */
export async function linkTextAt(dirFd: number, name: string): Promise<string | null> {
  try {
    return await fs.readlink(fdPath(dirFd, name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EINVAL') return null;
    throw err;
  }
}

let available: boolean | undefined;

/** Whether `/proc/self/fd` is there (Linux with /proc mounted); checked once. */
export function procFdAvailable(): boolean {
  available ??= existsSync('/proc/self/fd');
  return available;
}

/** True for the errors an open with `O_NOFOLLOW` gives when the name is a symlink. */
export function maybeSymlink(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ELOOP' || code === 'ENOTDIR' || code === 'EMLINK';
}

/**
 * An fs error's message without the `/proc/self/fd/…` path the confined primitive opened (it
 * means nothing to the person or the model): `ENOENT: no such file or directory`.
 */
export function errnoWords(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/, \w+ '\/proc\/self\/fd\/[^']*'( -> '[^']*')?$/, '');
}
