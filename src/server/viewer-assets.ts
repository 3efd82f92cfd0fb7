/** One file of the run viewer. */
export interface ViewerAsset {
  body: Uint8Array | string;
  contentType: string;
}

/**
 * Where the run viewer's files come from. `read('index.html')` is the page; the rest are the
 * files it names under `assets/`. `reins/server`'s `viewerDirectory()` reads the build shipped in
 * the package; anything else (an object store, a bundle in memory) implements the same.
 */
export interface ViewerAssets {
  /** `path` is relative, `/`-separated, already checked to hold no `..` or empty segment. */
  read(path: string): Promise<ViewerAsset | undefined>;
}

/** A relative asset path the service may ask for: plain names, no dot-segments, no backslashes. */
export function isSafeAssetPath(path: string): boolean {
  return (
    path.length <= 200 &&
    path
      .split('/')
      .every((segment) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(segment) && !segment.includes('..'))
  );
}
