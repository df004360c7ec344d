import { describe, expect, it } from "vitest";
import { prepareBlob } from "../../store/blob.js";
import { blobRows } from "./sql-backend.js";

describe("blobRows", () => {
  it("keeps each blob once, named by its first position, in ref order", () => {
    // First seen in descending ref order (mid 90ac..., alpha 8ed3..., zeta 5cc1...).
    const contents = ["mid", "alpha", "mid", "zeta", "alpha"];
    const prepared = contents.map((content, index) => prepareBlob(content, `$.blobs[${index}]`));
    const rows = blobRows(prepared, "$.blobs");
    const refs = rows.map((row) => row.ref);
    expect(refs).toEqual([...new Set(prepared.map((blob) => blob.ref))].sort());
    const pathOf = (content: string) =>
      rows.find((row) => row.ref === prepareBlob(content).ref)?.path;
    expect(refs).toEqual(["zeta", "alpha", "mid"].map((content) => prepareBlob(content).ref));
    expect(pathOf("mid")).toBe("$.blobs[0]");
    expect(pathOf("alpha")).toBe("$.blobs[1]");
    expect(pathOf("zeta")).toBe("$.blobs[3]");
    // The stored (encoded) bytes travel, not the content.
    expect(
      rows.every((row) => row.stored === prepared.find((b) => b.ref === row.ref)?.stored),
    ).toBe(true);
    expect(blobRows([], "$")).toEqual([]);
  });
});
