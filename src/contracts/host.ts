/** What the host says about where the caches are (read in settings.ts, the one reader of process.env). */
export interface CacheSettings {
  /** npm_config_cache / NPM_CONFIG_CACHE. */
  npmCache?: string;
  /** npm_config_userconfig / NPM_CONFIG_USERCONFIG (default ~/.npmrc). */
  npmUserConfig?: string;
  /** YARN_CACHE_FOLDER (yarn 1). */
  yarnCache?: string;
  /** npm_config_store_dir / PNPM_STORE_DIR (pnpm's store). */
  pnpmStore?: string;
  /** BUN_INSTALL_CACHE_DIR. */
  bunCache?: string;
  /** XDG_CACHE_HOME (default ~/.cache). */
  xdgCacheHome?: string;
  /** XDG_DATA_HOME (default ~/.local/share). */
  xdgDataHome?: string;
  /** MINI_CURSOR_WRITABLE: extra folders the user makes writable. */
  extraWritable?: readonly string[];
}
