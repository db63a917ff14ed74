/** File names for titles and messages (pure). */

/** The file name of a URI or path, e.g. "ds_config.json". */
export function fileNameOf(uri: string): string {
  const clean = uri.split(/[?#]/)[0] ?? uri;
  const name = clean.slice(clean.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(name) || uri;
  } catch {
    return name || uri;
  }
}
