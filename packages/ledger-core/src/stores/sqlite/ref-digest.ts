/** The 32-byte digest a `sha256:<hex>` reference names: the key of `blobs` and `blob_refs`. */
export function refDigest(ref: string): Buffer {
  return Buffer.from(ref.slice("sha256:".length), "hex");
}
