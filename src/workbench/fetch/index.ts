/**
 * Downloads for the `fetch` action: each hop parsed, resolved and vetted by the address
 * policy before a socket opens (see {@link fetchToFile}). The only door into the room:
 * files outside `fetch/` import from here.
 *
 * @module
 */
export { fetchToFile } from './downloader.js';
export type { HostResolver } from './target.js';
