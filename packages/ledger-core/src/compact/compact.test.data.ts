/** Deterministic filler text of about `bytes` characters: the same for the same seed. */
export function words(seed: number, bytes: number): string {
  const list = ["ledger", "agent", "tool", "message", "durable", "replay", "hash", "blob"];
  let out = "";
  let state = seed;
  while (out.length < bytes) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    out += `${list[state % list.length]} `;
  }
  return out;
}
