import { readFile } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSafeAssetPath, type ViewerAsset, type ViewerAssets } from './viewer-assets.js';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/**
 * The viewer built into the package (`dist/viewer`, written by `npm run build`). From `src/server`
 * and from `dist/server` alike it is two levels up, then `dist/viewer`.
 */
export const builtViewerDirectory = fileURLToPath(new URL('../../dist/viewer/', import.meta.url));

/**
 * Serves the run viewer from a directory (Node). Paths are checked twice: by shape, and by where
 * they resolve, so nothing outside `directory` is ever read.
 *
 * @param directory - @default the viewer built into the package (`dist/viewer`)
 */
export function viewerDirectory(directory: string = builtViewerDirectory): ViewerAssets {
  const root = resolve(directory);
  return {
    async read(path): Promise<ViewerAsset | undefined> {
      if (!isSafeAssetPath(path)) return undefined;
      const file = resolve(join(root, path));
      if (!file.startsWith(root + sep)) return undefined;
      const contentType = contentTypes[extname(file)];
      if (!contentType) return undefined;
      try {
        return { body: await readFile(file), contentType };
      } catch {
        return undefined;
      }
    },
  };
}
