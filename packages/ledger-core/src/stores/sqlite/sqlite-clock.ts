/**
 * Now on SQLite's clock (the host's), in epoch ms: blob put times and the retention grace use
 * it, the same for every process on the file whatever its own idea of the time.
 */
export const epochMs = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
