/** ferrite's version, reported by /state and /stats.json. Kept in step with package.json. */
export const VERSION = '0.1.0';
