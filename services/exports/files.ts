import { constants } from 'node:fs';
import { chmod, mkdir, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { basename, join, resolve } from 'node:path';

// The export store: finished files under a key, shared by the
// workers that write them and the APIs that serve them. This one is a
// directory (a shared volume in a multi-machine setup); object storage would
// implement the same small interface.

export interface ExportFileStore {
  /**
   * A new, empty temporary file for one attempt at export `id`. Leftovers of
   * earlier attempts are removed first, so a retry never continues or
   * appends to a file a crashed attempt left behind.
   */
  create(id: string, attempt: number): Promise<ExportFileWriter>;
  /** The finished file under `key`, or undefined when it is gone. */
  open(key: string): Promise<StoredFile | undefined>;
  /** Deletes the finished file of export `id` and any temporary files. Missing files are fine. */
  remove(id: string): Promise<void>;
}

export interface ExportFileWriter {
  write(bytes: Buffer): Promise<void>;
  /** Makes the file durable and publishes it under its key, atomically; returns the key. */
  commit(): Promise<string>;
  /** Drops the temporary file. */
  abort(): Promise<void>;
}

export interface StoredFile {
  size: number;
  stream(): Readable;
  close(): Promise<void>;
}

function exportFileKey(id: string): string {
  return `${id}.xml`;
}

// Export files hold whole registries: readable by the service's user only
// (0600 in a 0700 directory), and opened without following a symbolic link,
// so a link planted in the directory cannot make the service write or serve
// another file.
const PRIVATE_FILE = 0o600;
const PRIVATE_DIRECTORY = 0o700;
const WRITE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
const READ = constants.O_RDONLY | constants.O_NOFOLLOW;

export function directoryExportStore(directory: string): ExportFileStore {
  const dir = resolve(directory);
  const temporaryPrefix = (id: string) => `.${id}.attempt-`;
  const removeTemporaries = async (id: string) => {
    const names = await readdir(dir).catch(() => [] as string[]);
    await Promise.all(names.filter((name) => name.startsWith(temporaryPrefix(id))).map((name) => unlinkIfPresent(join(dir, name))));
  };

  return {
    async create(id, attempt) {
      await mkdir(dir, { recursive: true, mode: PRIVATE_DIRECTORY });
      // A directory made before (or by someone else's umask) is made private too.
      await chmod(dir, PRIVATE_DIRECTORY);
      await removeTemporaries(id);
      const temporary = join(dir, `${temporaryPrefix(id)}${attempt}.tmp`);
      // Truncated: even a file of the same attempt number starts empty.
      const handle = await open(temporary, WRITE_NEW, PRIVATE_FILE);
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        await handle.close();
      };
      return {
        async write(bytes) {
          let offset = 0;
          while (offset < bytes.length) offset += (await handle.write(bytes, offset)).bytesWritten;
        },
        async commit() {
          await handle.sync();
          await close();
          const key = exportFileKey(id);
          await rename(temporary, join(dir, key));
          await syncDirectory(dir);
          return key;
        },
        async abort() {
          await close().catch(() => undefined);
          await unlinkIfPresent(temporary);
        },
      };
    },

    async open(key) {
      let handle: FileHandle;
      try {
        handle = await open(join(dir, basename(key)), READ);
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      const { size } = await handle.stat();
      return {
        size,
        // The stream closes the handle when it ends or is destroyed.
        stream: () => handle.createReadStream({ autoClose: true }),
        close: () => handle.close(),
      };
    },

    async remove(id) {
      await unlinkIfPresent(join(dir, exportFileKey(id)));
      await removeTemporaries(id);
    },
  };
}

/** A rename is durable only once the directory entry is on disk too. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function unlinkIfPresent(path: string): Promise<void> {
  await unlink(path).catch((error: unknown) => {
    if (!isMissing(error)) throw error;
  });
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
