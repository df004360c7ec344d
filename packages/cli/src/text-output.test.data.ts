import type { OutputStream } from "./io.js";

/** An output stream that keeps what a command printed, for a test to read (`isTTY` as given). */
export function textOutput(isTTY?: boolean): OutputStream & { text: string } {
  const stream: OutputStream & { text: string } = {
    text: "",
    ...(isTTY === undefined ? {} : { isTTY }),
    write(chunk: string) {
      stream.text += chunk;
      return true;
    },
  };
  return stream;
}
