/** The part of picomatch (4.x, no bundled types) the walker uses. */
declare module "picomatch" {
  interface PicomatchOptions {
    dot?: boolean;
    nocase?: boolean;
  }
  function picomatch(glob: string | string[], options?: PicomatchOptions): (test: string) => boolean;
  export default picomatch;
}
